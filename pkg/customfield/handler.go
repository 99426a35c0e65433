package customfield

import (
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the internal catalog routes (used by the admin CLI and by other services).
type Handler struct {
	store *Store
}

// NewHandler serves store.
func NewHandler(store *Store) *Handler { return &Handler{store: store} }

// Routes registers the internal routes on r, which must already require the internal token.
func (h *Handler) Routes(r gin.IRouter) {
	r.POST("/internal/custom-fields", web.Handle(h.upsert))
	r.GET("/internal/custom-fields", web.Handle(h.list))
}

func (h *Handler) upsert(c *gin.Context) (any, error) {
	var def Definition
	if err := web.DecodeJSON(c, &def); err != nil {
		return nil, err
	}
	f, err := def.Validate()
	if err != nil {
		return nil, err
	}
	id, err := h.store.Upsert(c.Request.Context(), f)
	if err != nil {
		return nil, err
	}
	return web.ID{ID: id}, nil
}

func (h *Handler) list(c *gin.Context) (any, error) {
	list, err := h.store.List(c.Request.Context())
	if err != nil {
		return nil, err
	}
	return gin.H{"list": list}, nil
}
