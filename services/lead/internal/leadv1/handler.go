package leadv1

import (
	"ccplatform/pkg/identity"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/lead"

	"github.com/gin-gonic/gin"
)

// Handler serves the v1 lead operations (the async create is internal/asynccreate's).
type Handler struct {
	svc *lead.Service
}

// NewHandler serves svc.
func NewHandler(svc *lead.Service) *Handler {
	return &Handler{svc: svc}
}

// Routes registers the v1 routes on r, which must already require the internal token; idempotent
// guards the create routes.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v1/lead/create", idempotent, web.Handle(h.create))
	r.POST("/v1/lead/update/:lead_id", web.Handle(h.update))
}

// create is createLeadV1 (POST /v1/lead/create/): returns the id of the new lead.
func (h *Handler) create(c *gin.Context) (any, error) {
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := Check(h.svc, in, lead.ForCreate)
	if err != nil {
		return nil, err
	}
	if err := h.svc.CheckCreate(c.Request.Context(), identity.Of(c), ch); err != nil {
		return nil, lead.RenameFields(err, Names)
	}
	id, err := h.svc.Create(c.Request.Context(), ch, lead.MetaOf(c, lead.MethodAPIv1))
	if err != nil {
		return nil, lead.RenameFields(err, Names)
	}
	return web.ID{ID: id}, nil
}

// update is updateLeadV1; data is [] like updateLead.
func (h *Handler) update(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "lead_id")
	if err != nil {
		return nil, err
	}
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := Check(h.svc, in, lead.ForUpdate)
	if err != nil {
		return nil, err
	}
	caller := identity.Of(c)
	if err := lead.CheckUpdateFields(caller, ch); err != nil {
		return nil, err
	}
	if err := h.svc.CheckUpdate(c.Request.Context(), caller, id); err != nil {
		return nil, err
	}
	return nil, lead.RenameFields(h.svc.Update(c.Request.Context(), id, ch, caller.Ref()), Names)
}
