package callattempt

import (
	"ccplatform/pkg/identity"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the call-attempt group operations.
type Handler struct {
	store *Store
}

// NewHandler serves store.
func NewHandler(store *Store) *Handler { return &Handler{store: store} }

// Routes registers the public routes on r (which must already require the internal token);
// idempotent guards the create route.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/call-attempt/create", idempotent, web.Handle(h.create))
}

// create is createCallAttemptGroup: returns the id of the new group.
func (h *Handler) create(c *gin.Context) (any, error) {
	var req CreateRequest
	if err := web.DecodeJSON(c, &req); err != nil {
		return nil, err
	}
	g, err := req.Validate()
	if err != nil {
		return nil, err
	}
	id, err := h.store.Create(c.Request.Context(), g, callerID(c))
	if err != nil {
		return nil, err
	}
	return web.ID{ID: id}, nil
}

// callerID is the verified user making the request, nil for calls without one.
func callerID(c *gin.Context) *int64 {
	if id := identity.Of(c).UserID; id > 0 {
		return &id
	}
	return nil
}
