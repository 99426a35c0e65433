package call

import (
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the call operations.
type Handler struct {
	store *Store
}

// NewHandler serves store.
func NewHandler(store *Store) *Handler { return &Handler{store: store} }

// Routes registers the call routes on r, which must already require the internal token.
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/call", web.Handle(h.list))
	r.GET("/v2/call/detail/:callId", web.Handle(h.detail))
}

// list is operation 12: a page of calls with the total after the filters.
func (h *Handler) list(c *gin.Context) (any, error) {
	ctx := c.Request.Context()
	f, err := ParseFilter(c.Request.URL.Query())
	if err != nil {
		return nil, err
	}
	records, err := h.store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	total, err := h.store.Count(ctx, f)
	if err != nil {
		return nil, err
	}
	calls := make([]Call, len(records))
	for i, r := range records {
		calls[i] = ViewOf(r)
	}
	return listquery.NewResult(calls, f.Page, total), nil
}

// detail is operation 13.
func (h *Handler) detail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "callId")
	if err != nil {
		return nil, err
	}
	r, err := h.store.Get(c.Request.Context(), id)
	if err != nil {
		return nil, err
	}
	return ViewOf(r), nil
}
