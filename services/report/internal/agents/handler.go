package agents

import (
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
	"ccplatform/services/report/internal/period"

	"github.com/gin-gonic/gin"
)

// Handler serves the agents report.
type Handler struct {
	store  *Store
	scopes *visibleorders.Resolver
	now    func() time.Time
}

// NewHandler answers from store, narrowed by the orders each caller may see (scopes).
func NewHandler(store *Store, scopes *visibleorders.Resolver, now func() time.Time) *Handler {
	return &Handler{store: store, scopes: scopes, now: now}
}

// Routes registers the report on r, which must already require the internal token.
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/report/agents", h.report)
}

// maxIDs bounds the agents and orders one request names.
const maxIDs = 1000

func (h *Handler) report(c *gin.Context) {
	rows, err := h.rows(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if c.NegotiateFormat(gin.MIMEJSON, "text/csv") == "text/csv" {
		writeCSV(c, rows)
		return
	}
	web.OK(c, gin.H{"list": rows})
}

// rows applies who sees what: an agent (call-center) only themselves; staff every agent and order;
// anyone else the agents' figures within the orders they see (calls in them, and states
// announced with one of them).
func (h *Handler) rows(c *gin.Context) ([]Row, error) {
	ctx := c.Request.Context()
	q := c.Request.URL.Query()
	fe := apperr.FieldErrors{}
	users := listquery.IDs(q, "userIds", fe)
	orders := listquery.IDs(q, "orderIds", fe)
	if len(users) > maxIDs {
		fe.Addf("userIds[]", "must name at most %d agents", maxIDs)
	}
	if len(orders) > maxIDs {
		fe.Addf("orderIds[]", "must name at most %d orders", maxIDs)
	}
	p := period.Parse(q, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	caller := identity.Of(c)
	// An agent's own figures are theirs in every order; anyone else's follow their orders.
	visible := visibleorders.Visible{All: true}
	if access.Group(caller.AccessGroup) == access.CallCenter {
		if len(users) > 0 && !slices.Contains(users, caller.UserID) {
			return []Row{}, nil
		}
		users = []int64{caller.UserID}
	} else {
		var err error
		if visible, err = h.scopes.Fresh(ctx, caller); err != nil {
			return nil, err
		}
	}
	ids, none := visible.Narrow(orders)
	if none {
		return []Row{}, nil
	}
	f := Filter{AllUsers: len(users) == 0, Users: users, AllOrders: visible.All && len(orders) == 0, Orders: ids}
	calls, states, current, err := h.store.Read(ctx, f, p.Starts)
	if err != nil {
		return nil, err
	}
	seen := func(order int64) bool { return f.AllOrders || slices.Contains(f.Orders, order) }
	var list []int64
	if len(users) > 0 {
		list = slices.Clone(users)
		slices.Sort(list)
	}
	rows := Build(list, p, calls, states, current, h.now(), seen)
	if len(rows) > period.MaxRows {
		return nil, period.TooManyRows(len(rows), "agents (userIds[])")
	}
	return rows, nil
}

func writeCSV(c *gin.Context, rows []Row) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="agents-report.csv"`)
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	var reasons []string
	for _, r := range rows {
		for reason := range r.PausedByReason {
			if !slices.Contains(reasons, reason) {
				reasons = append(reasons, reason)
			}
		}
	}
	slices.Sort(reasons)
	header := []string{"userId", "from", "to", "calls", "talkSeconds", "avgHandleSeconds", "availableSeconds", "ringingSeconds",
		"onCallSeconds", "wrapUpSeconds", "pausedSeconds", "occupancy"}
	for _, reason := range reasons {
		header = append(header, "paused_"+reason)
	}
	_ = w.Write(header)
	i, f := func(n int64) string { return strconv.FormatInt(n, 10) }, func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, r := range rows {
		rec := []string{i(r.UserID), r.From, r.To, i(r.Calls), i(r.TalkSeconds), f(r.AvgHandleSeconds), f(r.AvailableSeconds),
			f(r.RingingSeconds), f(r.OnCallSeconds), f(r.WrapUpSeconds), f(r.PausedSeconds), f(r.Occupancy)}
		for _, reason := range reasons {
			rec = append(rec, f(r.PausedByReason[reason]))
		}
		_ = w.Write(rec)
	}
	w.Flush()
}
