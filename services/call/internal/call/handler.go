package call

import (
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the call operations.
type Handler struct {
	store  *Store
	scopes *visibleorders.Resolver
}

// NewHandler serves store, narrowed to the orders each caller may see (scopes).
func NewHandler(store *Store, scopes *visibleorders.Resolver) *Handler {
	return &Handler{store: store, scopes: scopes}
}

// Routes registers the call routes on r, which must already require the internal token.
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/call", web.Handle(h.list))
	r.GET("/v2/call/detail/:callId", web.Handle(h.detail))
}

// list is listCalls (GET /v2/call/): a page of calls with the total after the filters.
func (h *Handler) list(c *gin.Context) (any, error) {
	ctx := c.Request.Context()
	f, err := ParseFilter(c.Request.URL.Query())
	if err != nil {
		return nil, err
	}
	caller := web.CallerOf(c)
	// Asked afresh: an order assigned a moment ago is in it.
	scope, err := h.scopes.Fresh(ctx, caller)
	if err != nil {
		return nil, err
	}
	// Narrowed in SQL, so totals and pages count only what the caller may see.
	f, none := Narrow(f, caller, scope)
	if none {
		return listquery.NewResult([]Call{}, f.Page, 0), nil
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
		calls[i] = Masked(ViewOf(r), r.OrderID, scope)
	}
	return listquery.NewResult(calls, f.Page, total), nil
}

// detail is getCall (GET /v2/call/detail/{callId}/).
func (h *Handler) detail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "callId")
	if err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	r, err := h.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	caller := web.CallerOf(c)
	// A miss is asked again: it may be an order assigned a moment ago.
	scope, _, err := h.scopes.Check(ctx, caller, r.OrderID)
	if err != nil {
		return nil, err
	}
	if !Visible(r, caller, scope) {
		// Exactly the answer for a missing call.
		return nil, apperr.NotFoundf("call %d not found", id)
	}
	return Masked(ViewOf(r), r.OrderID, scope), nil
}
