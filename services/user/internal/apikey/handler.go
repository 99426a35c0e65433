package apikey

import (
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves key verification to the gateway.
type Handler struct {
	store *Store
}

// NewHandler is a handler over store.
func NewHandler(store *Store) *Handler { return &Handler{store: store} }

// RegisterInternal adds the routes the gateway calls; r must already demand the internal token.
func (h *Handler) RegisterInternal(r gin.IRoutes) {
	r.POST("/internal/auth/verify", web.Handle(h.verify))
}

type verifyRequest struct {
	Key string `json:"key"`
}

// verify answers who a key speaks for, or 401 when it speaks for no one (an empty key included).
func (h *Handler) verify(c *gin.Context) (any, error) {
	var req verifyRequest
	if err := web.DecodeJSON(c, &req); err != nil {
		return nil, err
	}
	return h.store.Verify(c.Request.Context(), req.Key)
}
