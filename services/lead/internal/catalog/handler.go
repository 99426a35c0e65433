package catalog

import (
	"ccplatform/pkg/customfield"
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
	customfield.NewHandler(h.store.Store).Routes(r)
	r.GET("/internal/lead-statuses", web.Handle(h.statuses))
}

func (h *Handler) statuses(c *gin.Context) (any, error) {
	list, err := h.store.StatusList(c.Request.Context())
	if err != nil {
		return nil, err
	}
	return gin.H{"list": list}, nil
}
