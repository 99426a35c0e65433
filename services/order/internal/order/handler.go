package order

import (
	"strconv"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the order operations: it decodes, asks Service, and answers.
type Handler struct {
	svc *Service
}

// NewHandler serves svc's operations.
func NewHandler(svc *Service) *Handler { return &Handler{svc: svc} }

// Routes registers the order routes on r, which must already require the internal token;
// idempotent guards the create route.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/order/create", idempotent, web.Handle(h.create))
	r.POST("/v2/order/update/:orderId", web.Handle(h.update))
	r.GET("/v2/order/detail/:orderId", web.Handle(h.detail))
	// The same view for other services, with the call-attempt group (the lead service reads an
	// order's code and dialing rules).
	r.GET("/internal/orders/:id", web.Handle(h.internalDetail))
	// Which orders a caller may see, for the lead and call services' lists and checks.
	r.GET("/internal/order-scope", web.Handle(h.internalVisibleOrders)) // ?userId=&accessGroup=
	r.GET("/internal/orders", web.Handle(h.internalByCode))             // ?code=…
}

// create is createOrder (POST /v2/order/create/): returns the id of the new order.
func (h *Handler) create(c *gin.Context) (any, error) {
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	id, err := h.svc.Create(c.Request.Context(), in, web.CallerOf(c))
	if err != nil {
		return nil, err
	}
	return web.ID{ID: id}, nil
}

// update is updateOrder. The contract shows no response body; like the other update operations
// (updateLead, updateAgentGroup) it answers data `[]`; the caller reads it back with getOrder.
func (h *Handler) update(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return nil, err
	}
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	return nil, h.svc.Update(c.Request.Context(), id, in, web.CallerOf(c))
}

// detail is getOrder (GET /v2/order/detail/{orderId}/).
func (h *Handler) detail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return nil, err
	}
	return h.svc.Detail(c.Request.Context(), id, web.CallerOf(c))
}

// internalVisibleOrders answers which orders a caller (userId, accessGroup) may see, by the rule of Store.VisibleTo.
func (h *Handler) internalVisibleOrders(c *gin.Context) (any, error) {
	q := c.Request.URL.Query()
	user, err := strconv.ParseInt(q.Get("userId"), 10, 64)
	if err != nil || user <= 0 {
		return nil, apperr.Field("userId", "must be an integer > 0")
	}
	return h.svc.VisibleOrders(c.Request.Context(), Caller{UserID: user, Group: access.Group(q.Get("accessGroup"))})
}

func (h *Handler) internalDetail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	return h.svc.InternalDetail(c.Request.Context(), id)
}
