package lead

import (
	"strconv"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the v2 lead operations and the internal lead list (the async create is
// internal/asynccreate's).
type Handler struct {
	svc *Service
}

// NewHandler serves svc.
func NewHandler(svc *Service) *Handler {
	return &Handler{svc: svc}
}

// Routes registers the routes on r, which must already require the internal token; idempotent
// guards the create routes.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/lead/create", idempotent, web.Handle(h.create))
	r.POST("/v2/lead/update/:leadId", web.Handle(h.update))
	r.GET("/v2/lead", web.Handle(h.list))
	r.GET("/v2/lead/detail/:leadId", web.Handle(h.detail))
	r.GET("/internal/leads", web.Handle(h.briefs))
}

// create is createLead (POST /v2/lead/create/): returns the id of the new lead.
func (h *Handler) create(c *gin.Context) (any, error) {
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := h.svc.CheckBody(in, ForCreate)
	if err != nil {
		return nil, err
	}
	if err := h.svc.CheckCreate(c.Request.Context(), identity.Of(c), ch); err != nil {
		return nil, err
	}
	id, err := h.svc.Create(c.Request.Context(), ch, MetaOf(c, MethodAPIv2))
	if err != nil {
		return nil, err
	}
	return web.ID{ID: id}, nil
}

// MetaOf is what a create records about its request.
func MetaOf(c *gin.Context, method string) Meta {
	return Meta{CreateMethod: method, IP: web.ClientIP(c), CreatedBy: identity.Of(c).Ref()}
}

// update is updateLead (POST /v2/lead/update/{leadId}/); data is [].
func (h *Handler) update(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "leadId")
	if err != nil {
		return nil, err
	}
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := h.svc.CheckBody(in, ForUpdate)
	if err != nil {
		return nil, err
	}
	caller := identity.Of(c)
	if err := CheckUpdateFields(caller, ch); err != nil {
		return nil, err
	}
	if err := h.svc.CheckUpdate(c.Request.Context(), caller, id); err != nil {
		return nil, err
	}
	return nil, h.svc.Update(c.Request.Context(), id, ch, caller.Ref())
}

// detail is getLead (GET /v2/lead/detail/{leadId}/).
func (h *Handler) detail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "leadId")
	if err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	caller := identity.Of(c)
	if err := h.svc.CheckVisible(ctx, caller, id); err != nil {
		return nil, err
	}
	l, err := h.svc.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	scope, err := h.svc.Scope(ctx, caller)
	if err != nil {
		return nil, err
	}
	return Masked(ViewOf(l), scope), nil
}

// list is listLeads (GET /v2/lead/).
func (h *Handler) list(c *gin.Context) (any, error) {
	q := c.Request.URL.Query()
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(q, fe)
	f := Filter{
		OrderIDs:  listquery.IDs(q, "orderIds", fe),
		StatusIDs: listquery.IntIDs(q, "statusIds", fe),
		Period:    listquery.ParsePeriod(q, "createdAt", fe),
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	// Narrowed in SQL to the caller's orders, so totals and pages count only what they may see.
	scope, err := h.svc.FreshScope(c.Request.Context(), identity.Of(c))
	if err != nil {
		return nil, err
	}
	var none bool
	if f.OrderIDs, none = scope.Narrow(f.OrderIDs); none {
		return listquery.NewResult([]ListItem{}, page, 0), nil
	}
	leads, total, err := h.svc.List(c.Request.Context(), f, page)
	if err != nil {
		return nil, err
	}
	items := make([]ListItem, len(leads))
	for i, l := range leads {
		items[i] = ListItemOf(l)
		items[i].View = Masked(items[i].View, scope)
	}
	return listquery.NewResult(items, page, total), nil
}

// briefs is GET /internal/leads?orderId=&limit= (default 100, at most 1000).
func (h *Handler) briefs(c *gin.Context) (any, error) {
	fe := apperr.FieldErrors{}
	var orderID int64
	if raw := c.Query("orderId"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 {
			fe.Add("orderId", "must be an integer > 0")
		}
		orderID = n
	}
	limit := 100
	if raw := c.Query("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 1000 {
			fe.Add("limit", "must be an integer from 1 to 1000")
		}
		limit = n
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	list, err := h.svc.Briefs(c.Request.Context(), orderID, limit)
	if err != nil {
		return nil, err
	}
	return gin.H{"list": list}, nil
}
