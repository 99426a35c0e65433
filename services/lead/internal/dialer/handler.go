package dialer

import (
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the dialing queue's routes. Who may call them is the gateway's policy (staff and
// clients); the service keeps a client to its own orders.
type Handler struct {
	svc *Service
}

// NewHandler serves svc.
func NewHandler(svc *Service) *Handler { return &Handler{svc: svc} }

// Routes registers the routes on r, which must already require the internal token; idempotent
// guards lease and release (a retried lease with its key hands out nothing twice).
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/dialer/lease", idempotent, web.Handle(h.lease))
	r.POST("/v2/dialer/release", idempotent, web.Handle(h.release))
	r.POST("/v2/dialer/extend", web.Handle(h.extend))
	r.GET("/v2/dialer/pace/:orderId", web.Handle(h.pace))
	r.GET("/v2/dialer/explain/:orderId", web.Handle(h.explain))
	r.POST("/internal/dialer/live", web.Handle(h.live))
}

// live answers the report service's live stream: the dialing figures of the orders it names.
func (h *Handler) live(c *gin.Context) (any, error) {
	ids, err := decode[[]int64, LiveInput](c)
	if err != nil {
		return nil, err
	}
	list, err := h.svc.Live(c.Request.Context(), ids)
	if err != nil {
		return nil, err
	}
	return gin.H{"list": list}, nil
}

func (h *Handler) pace(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return nil, err
	}
	return h.svc.Pace(c.Request.Context(), identity.Of(c), id)
}

func (h *Handler) explain(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return nil, err
	}
	return h.svc.Explain(c.Request.Context(), identity.Of(c), id)
}

func (h *Handler) lease(c *gin.Context) (any, error) {
	r, err := decode[LeaseRequest, LeaseInput](c)
	if err != nil {
		return nil, err
	}
	return h.svc.Lease(c.Request.Context(), identity.Of(c), r)
}

func (h *Handler) release(c *gin.Context) (any, error) {
	r, err := decode[ReleaseRequest, ReleaseInput](c)
	if err != nil {
		return nil, err
	}
	return h.svc.Release(c.Request.Context(), identity.Of(c), r)
}

func (h *Handler) extend(c *gin.Context) (any, error) {
	r, err := decode[ExtendRequest, ExtendInput](c)
	if err != nil {
		return nil, err
	}
	return h.svc.Extend(c.Request.Context(), identity.Of(c), r)
}

// decode reads the body as In and runs its rules: the request, or a 400 naming every broken field.
func decode[R any, In interface{ Check(apperr.FieldErrors) R }](c *gin.Context) (R, error) {
	var in In
	if err := web.DecodeJSON(c, &in); err != nil {
		var zero R
		return zero, err
	}
	fe := apperr.FieldErrors{}
	r := in.Check(fe)
	return r, fe.Err()
}
