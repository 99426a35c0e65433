package order

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/web"
	"ccplatform/services/order/internal/callattempt"

	"github.com/gin-gonic/gin"
)

// Handler serves the order operations.
type Handler struct {
	orders   *Store
	fields   *customfield.Store
	attempts *callattempt.Store
	users    *UserDirectory
	dates    *DateParser
}

// NewHandler wires the order operations to their stores and to the user directory.
func NewHandler(orders *Store, fields *customfield.Store, attempts *callattempt.Store, users *UserDirectory) *Handler {
	return &Handler{orders: orders, fields: fields, attempts: attempts, users: users, dates: NewDateParser()}
}

// Routes registers the order routes on r, which must already require the internal token;
// idempotent guards the create route.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/order/create", idempotent, web.Handle(h.create))
	r.POST("/v2/order/update/:orderId", web.Handle(h.update))
	r.GET("/v2/order/detail/:orderId", web.Handle(h.detail))
	// The same view for other services, with the call-attempt group (the lead service reads an
	// order's code and dialing rules).
	r.GET("/internal/orders/:id", web.Handle(h.internalDetail))
	// Which orders a caller may see, for the lead and call services' lists and checks.
	r.GET("/internal/order-scope", web.Handle(h.internalScope)) // ?userId=&accessGroup=
	r.GET("/internal/orders", web.Handle(h.internalByCode))     // ?code=…
}

// create is operation 1: returns the id of the new order.
func (h *Handler) create(c *gin.Context) (any, error) {
	ctx := c.Request.Context()
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := h.check(ctx, in, ForCreate, callerOf(web.CallerOf(c)))
	if err != nil {
		return nil, err
	}
	var defaultGroup *int64
	if !ch.CallAttemptGroupID.Set {
		if defaultGroup, err = h.attempts.DefaultID(ctx); err != nil {
			return nil, err
		}
	}
	o := New(defaultGroup)
	ch.ApplyTo(&o)
	o.CreatedBy, o.UpdatedBy = web.CallerOf(c).Ref(), web.CallerOf(c).Ref()
	id, _, err := h.orders.Create(ctx, o)
	if err != nil {
		return nil, err
	}
	return web.ID{ID: id}, nil
}

// update is operation 2. The contract shows no response body; like the other update operations
// (6, 17) it answers data `[]`, and the caller reads the order back with operation 3 if needed.
func (h *Handler) update(c *gin.Context) (any, error) {
	ctx := c.Request.Context()
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return nil, err
	}
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	caller := callerOf(web.CallerOf(c))
	ch, err := h.check(ctx, in, ForUpdate, caller)
	if err != nil {
		return nil, err
	}
	updatedBy := web.CallerOf(c).Ref()
	_, err = h.orders.Update(ctx, id, func(o *Order) error {
		if !CanUpdate(caller, *o) {
			// Exactly the answer for a missing order: nobody learns what exists elsewhere.
			return notFound(id)
		}
		ch.ApplyTo(o)
		o.UpdatedBy = updatedBy
		return nil
	})
	if err != nil {
		return nil, err
	}
	// order.updated went into the outbox in the update's transaction: it is published after the
	// commit, and never for an update that was rolled back.
	return nil, nil
}

// detail is operation 3.
func (h *Handler) detail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "orderId")
	if err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	o, err := h.orders.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	caller, err := h.withGroups(ctx, callerOf(web.CallerOf(c)))
	if err != nil {
		return nil, err
	}
	if !CanSee(caller, o) {
		return nil, notFound(id)
	}
	return ViewOf(o), nil
}

// Scope is the set of orders one caller may see: every order, or those listed; HiddenContacts
// are those of them whose lead phones the caller sees masked.
type Scope struct {
	All            bool    `json:"all"`
	OrderIDs       []int64 `json:"orderIds"`
	HiddenContacts []int64 `json:"hiddenContacts"`
}

// internalScope answers which orders a caller (userId, accessGroup) may see, by the rules of CanSee.
func (h *Handler) internalScope(c *gin.Context) (any, error) {
	q := c.Request.URL.Query()
	user, err := strconv.ParseInt(q.Get("userId"), 10, 64)
	if err != nil || user <= 0 {
		return nil, apperr.Field("userId", "must be an integer > 0")
	}
	ctx := c.Request.Context()
	caller, err := h.withGroups(ctx, Caller{UserID: user, Group: access.Group(q.Get("accessGroup"))})
	if err != nil {
		return nil, err
	}
	if SeesAll(caller) {
		return Scope{All: true, OrderIDs: []int64{}, HiddenContacts: []int64{}}, nil
	}
	ids, hidden, err := h.orders.VisibleTo(ctx, caller)
	if err != nil {
		return nil, err
	}
	return Scope{OrderIDs: ids, HiddenContacts: hidden}, nil
}

// withGroups adds the agent groups of an agent caller: their orders are the ones they or their
// groups work in.
func (h *Handler) withGroups(ctx context.Context, c Caller) (Caller, error) {
	if !c.isAgent() {
		return c, nil
	}
	groups, err := h.users.AgentGroupsOf(ctx, c.UserID)
	if err != nil {
		return Caller{}, err
	}
	c.GroupIDs = groups
	return c, nil
}

func (h *Handler) internalDetail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	o, err := h.orders.Get(c.Request.Context(), id)
	if err != nil {
		return nil, err
	}
	return internalViewOf(c.Request.Context(), o, h.attempts)
}

// check runs every rule on a body: first those of the body alone, then the references against
// their catalogs, so that one answer names every broken field. A client's orders are its own
// whatever it sends as clientUserId.
func (h *Handler) check(ctx context.Context, in Input, mode Mode, caller Caller) (Changes, error) {
	fe := apperr.FieldErrors{}
	ch := in.Check(mode, h.dates, fe)
	switch {
	case caller.Group == access.Client && mode == ForCreate:
		ch.ClientUserID = optional.Of(caller.UserID)
	case !SetsOwner(caller):
		ch.ClientUserID = optional.Value[int64]{}
	}
	if err := h.checkReferences(ctx, &ch, caller, fe); err != nil {
		// The user service being down must not hide plain mistakes in the body: those come first.
		if apperr.KindOf(err) == apperr.Unavailable && len(fe) > 0 {
			return Changes{}, fe.Err()
		}
		return Changes{}, err
	}
	return ch, fe.Err()
}

// checkReferences checks that what the body names exists: languages, custom fields (and their
// values' types), the call-attempt group, agents and agent groups.
func (h *Handler) checkReferences(ctx context.Context, ch *Changes, caller Caller, fe apperr.FieldErrors) error {
	if err := h.checkLanguages(ctx, ch, fe); err != nil {
		return err
	}
	if err := h.checkCustomValues(ctx, ch, fe); err != nil {
		return err
	}
	if ch.CallAttemptGroupID.Present() {
		ok, err := h.attempts.Exists(ctx, ch.CallAttemptGroupID.V)
		if err != nil {
			return err
		}
		if !ok {
			fe.Addf("callAttemptGroupId", "no call-attempt group has id %d", ch.CallAttemptGroupID.V)
		}
	}
	if ch.ClientUserID.Present() && ch.ClientUserID.V != caller.UserID {
		ok, err := h.users.IsActiveClient(ctx, ch.ClientUserID.V)
		if err != nil {
			return err
		}
		if !ok {
			fe.Add("clientUserId", clientRule)
		}
	}
	if ch.AgentGroupIDs.Present() {
		missing, err := h.users.MissingAgentGroups(ctx, ch.AgentGroupIDs.V)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			fe.Add("agentGroupIds", "unknown agent group ids: "+joinIDs(missing))
		}
	}
	if ch.AgentUserIDs.Present() && len(ch.AgentUserIDs.V) > 0 {
		missing, err := h.users.MissingUsers(ctx, ch.AgentUserIDs.V)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			fe.Add("agentUserIds", "unknown user ids: "+joinIDs(missing))
		}
	}
	return nil
}

func (h *Handler) checkLanguages(ctx context.Context, ch *Changes, fe apperr.FieldErrors) error {
	needed := ch.AIDefaultLanguage.Present()
	for _, t := range ch.TransferNumbers.V {
		needed = needed || len(t.Names) > 0
	}
	if !needed {
		return nil
	}
	langs, err := h.orders.Languages(ctx)
	if err != nil {
		return err
	}
	rule := "must be one of the available languages: " + strings.Join(langs, ", ")
	if ch.AIDefaultLanguage.Present() && !slices.Contains(langs, ch.AIDefaultLanguage.V) {
		fe.Add("aiDefaultLanguage", rule+" (or null)")
	}
	for i, t := range ch.TransferNumbers.V {
		for lang := range t.Names {
			if !slices.Contains(langs, lang) {
				fe.Add(fmt.Sprintf("transferNumbers[%d].names", i), "keys "+rule)
			}
		}
	}
	return nil
}

// checkCustomValues matches every sent value with its field and replaces it by the checked value.
func (h *Handler) checkCustomValues(ctx context.Context, ch *Changes, fe apperr.FieldErrors) error {
	if !ch.CustomValues.Present() || len(ch.CustomValues.V) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(ch.CustomValues.V))
	for id := range ch.CustomValues.V {
		ids = append(ids, id)
	}
	fields, err := h.fields.ByIDs(ctx, ids)
	if err != nil {
		return err
	}
	for id, raw := range ch.CustomValues.V {
		name := "customValues." + strconv.FormatInt(id, 10)
		f, ok := fields[id]
		if !ok {
			fe.Addf(name, "no order custom field has id %d", id)
			continue
		}
		v, rule := f.CheckValue(raw)
		if rule != "" {
			fe.Add(name, rule)
			continue
		}
		ch.CustomValues.V[id] = v
	}
	return nil
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ", ")
}
