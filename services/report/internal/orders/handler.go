package orders

import (
	"context"
	"encoding/csv"
	"net/http"
	"strconv"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
	"ccplatform/services/report/internal/period"
	"ccplatform/services/report/internal/statuses"

	"github.com/gin-gonic/gin"
)

// Catalog is the lead-status catalog (internal/statuses).
type Catalog interface {
	List(ctx context.Context) ([]statuses.Status, error)
}

// Handler serves the orders report.
type Handler struct {
	store   *Store
	scopes  *visibleorders.Resolver
	catalog Catalog
}

// NewHandler answers from store, narrowed to the orders each caller may see (scopes).
func NewHandler(store *Store, scopes *visibleorders.Resolver, catalog Catalog) *Handler {
	return &Handler{store: store, scopes: scopes, catalog: catalog}
}

// Routes registers the report on r, which must already require the internal token.
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/report/orders", h.report)
}

// maxOrders bounds the orders one request names.
const maxOrders = 1000

func (h *Handler) report(c *gin.Context) {
	rows, catalog, err := h.rows(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if c.NegotiateFormat(gin.MIMEJSON, "text/csv") == "text/csv" {
		writeCSV(c, rows, catalog)
		return
	}
	list, err := List(rows).MarshalJSON()
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OKEncoded(c, append(append([]byte(`{"list":`), list...), '}'))
}

func (h *Handler) rows(c *gin.Context) ([]Row, []statuses.Status, error) {
	ctx := c.Request.Context()
	q := c.Request.URL.Query()
	fe := apperr.FieldErrors{}
	asked := listquery.IDs(q, "orderIds", fe)
	if len(asked) > maxOrders {
		fe.Addf("orderIds[]", "must name at most %d orders", maxOrders)
	}
	p := period.Parse(q, fe)
	if err := fe.Err(); err != nil {
		return nil, nil, err
	}
	// Asked afresh: an order assigned a moment ago is in it.
	visible, err := h.scopes.Fresh(ctx, identity.Of(c))
	if err != nil {
		return nil, nil, err
	}
	catalog, err := h.catalog.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	ids, none := visible.Narrow(asked)
	if none {
		return []Row{}, catalog, nil
	}
	scope := Scope{All: visible.All && len(asked) == 0, OrderIDs: ids}
	sums, entered, agentTime, err := h.store.Read(ctx, scope, p.Starts)
	if err != nil {
		return nil, nil, err
	}
	list := Orders(ids, scope, sums, entered)
	if n := len(list) * p.Len(); n > period.MaxRows {
		return nil, nil, period.TooManyRows(n, "orders (orderIds[])")
	}
	return Build(list, p, sums, entered, agentTime, catalog), catalog, nil
}

// writeCSV answers rows as CSV with a header row: the JSON members in order, statuses as one
// column per catalog status (status_<id>).
func writeCSV(c *gin.Context, rows []Row, catalog []statuses.Status) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="orders-report.csv"`)
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	header := []string{"orderId", "from", "to", "calls", "answered", "contactRate", "abandoned", "abandonRate", "talkSeconds",
		"avgHandleSeconds", "leadsCalled", "conversions", "callsPerAgentHour"}
	for _, s := range catalog {
		header = append(header, "status_"+strconv.FormatInt(s.ID, 10))
	}
	_ = w.Write(header)
	i, f := func(n int64) string { return strconv.FormatInt(n, 10) }, func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, r := range rows {
		rec := []string{i(r.OrderID), r.From, r.To, i(r.Calls), i(r.Answered), f(r.ContactRate), i(r.Abandoned), f(r.AbandonRate),
			i(r.TalkSeconds), f(r.AvgHandleSeconds), i(r.LeadsCalled), i(r.Conversions), f(r.CallsPerAgentHour)}
		for _, s := range catalog {
			rec = append(rec, i(r.Statuses[strconv.FormatInt(s.ID, 10)]))
		}
		_ = w.Write(rec)
	}
	w.Flush()
}
