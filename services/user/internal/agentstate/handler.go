package agentstate

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/telephony"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"
)

// OrdersOf answers the orders an agent may take: those that name it among their agents or through
// one of its agent groups (the order service's visible orders of an agent).
type OrdersOf func(ctx context.Context, agent identity.Caller) ([]int64, error)

// Handler serves the agent state routes.
type Handler struct {
	store  *Store
	orders OrdersOf
	now    func() time.Time
}

// NewHandler serves store; orders, when set, adds to each listed agent the orders it may take.
func NewHandler(store *Store, orders OrdersOf, now func() time.Time) *Handler {
	return &Handler{store: store, orders: orders, now: now}
}

// Routes registers the routes on r, which must already demand the internal token.
func (h *Handler) Routes(r gin.IRoutes) {
	r.POST("/v2/agent/state", web.Handle(h.set))
	r.GET("/v2/agent/state", web.Handle(h.list))
	r.POST("/internal/agents/eligible", web.Handle(h.eligible))
}

// View is an agent's state on the wire.
type View struct {
	UserID      int64   `json:"userId"`
	State       string  `json:"state"`
	Since       *string `json:"since"`
	PauseReason *string `json:"pauseReason"`
	OrderID     *int64  `json:"orderId"`
	PhoneMode   string  `json:"phoneMode"`
	// Orders are the orders the agent may take (absent where the order service is not asked).
	Orders []int64 `json:"orders,omitempty"`
}

// ViewOf is a's view.
func ViewOf(a Agent) View {
	return View{UserID: a.UserID, State: a.State, Since: apitime.StringOrNull(a.Since), PauseReason: a.PauseReason,
		OrderID: a.OrderID, PhoneMode: a.PhoneMode}
}

// staff may set and read every agent's state.
func staff(g access.Group) bool { return g == access.Admin || g == access.Moderator }

// set is POST /v2/agent/state/: the caller sets its own state, staff any agent's.
func (h *Handler) set(c *gin.Context) (any, error) {
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	if err := CheckInput(in); err != nil {
		return nil, err
	}
	caller := identity.Of(c)
	target := caller.UserID
	if in.UserID != nil && *in.UserID != caller.UserID {
		if !staff(access.Group(caller.AccessGroup)) {
			return nil, apperr.New(apperr.Forbidden, "userId: an agent sets only its own state")
		}
		target = *in.UserID
	}
	ctx := c.Request.Context()
	known, err := h.store.Known(ctx, []int64{target})
	if err != nil {
		return nil, err
	}
	if !known[target] {
		return nil, apperr.NotFoundf("user %d does not exist", target)
	}
	ev := Event{AgentEvent: telephony.AgentEvent{EventID: "api-" + uuid.NewString(), UserID: target,
		At: h.now().UTC().Truncate(time.Microsecond), State: in.State, PauseReason: in.PauseReason}, Source: SourceAPI}
	if err := h.store.Apply(ctx, []Event{ev}); err != nil {
		return nil, err
	}
	agents, _, err := h.store.List(ctx, Filter{UserIDs: []int64{target}, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(agents) == 0 {
		// Not an active agent: the state is kept, the answer says what was set.
		return View{UserID: target, State: ev.State, Since: apitime.StringOrNull(&ev.At), PauseReason: ev.PauseReason}, nil
	}
	return ViewOf(agents[0]), nil
}

// ParseListQuery reads userIds[], state, offset and limit.
func ParseListQuery(q url.Values) (Filter, listquery.Page, error) {
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(q, fe)
	f := Filter{UserIDs: listquery.IDs(q, "userIds", fe), Offset: page.Offset, Limit: page.Limit}
	if vs := q["state"]; len(vs) > 0 {
		f.State = strings.TrimSpace(vs[len(vs)-1])
		if f.State != "" && !slices.Contains(telephony.AgentStates(), f.State) {
			fe.Add("state", "must be one of "+strings.Join(telephony.AgentStates(), ", "))
		}
	}
	return f, page, fe.Err()
}

// ordersAtOnce bounds the order service's questions one listing asks at once.
const ordersAtOnce = 8

// list is GET /v2/agent/state/: staff see every agent, a senior the agents of its groups (and
// itself), an agent itself.
func (h *Handler) list(c *gin.Context) (any, error) {
	f, page, err := ParseListQuery(c.Request.URL.Query())
	if err != nil {
		return nil, err
	}
	caller := identity.Of(c)
	ctx := c.Request.Context()
	switch g := access.Group(caller.AccessGroup); {
	case staff(g) || caller.UserID == 0:
	case g == access.CallCenterSenior:
		f.Self = caller.UserID
		if f.MembersOf, err = h.store.GroupsOf(ctx, caller.UserID); err != nil {
			return nil, err
		}
	default:
		f.Self, f.OnlySelf = caller.UserID, true
	}
	agents, total, err := h.store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	views := make([]View, len(agents))
	for i, a := range agents {
		views[i] = ViewOf(a)
	}
	if h.orders != nil {
		// One question per agent: asked side by side, so that a page of agents takes about as
		// long as the slowest answer, not the sum of them.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(ordersAtOnce)
		for i, a := range agents {
			g.Go(func() error {
				ids, err := h.orders(gctx, identity.Caller{UserID: a.UserID, AccessGroup: a.AccessGroup})
				if err != nil {
					return err
				}
				views[i].Orders = listquery.List(ids)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	return listquery.NewResult(views, page, total), nil
}

// EligibleInput is the body of POST /internal/agents/eligible.
type EligibleInput struct {
	UserIDs       []int64 `json:"userIds"`
	AgentGroupIDs []int64 `json:"agentGroupIds"`
}

// eligible is POST /internal/agents/eligible (the dialer's pacer): the active users among userIds
// and the members of agentGroupIds, each with its state.
func (h *Handler) eligible(c *gin.Context) (any, error) {
	var in EligibleInput
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	agents, err := h.store.Eligible(c.Request.Context(), in.UserIDs, in.AgentGroupIDs)
	if err != nil {
		return nil, err
	}
	views := make([]View, len(agents))
	for i, a := range agents {
		views[i] = ViewOf(a)
	}
	return map[string]any{"list": views}, nil
}
