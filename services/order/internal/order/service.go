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
)

// Service runs the order operations: the body's own rules (Input.Check), then the checks that
// need I/O (what the body names must exist), then the store. The rules themselves are plain
// functions (rules.go, input.go, access.go and the ones below); Service only fetches what they
// need.
type Service struct {
	orders   *Store
	fields   *customfield.Store
	attempts *callattempt.Store
	users    *UserDirectory
	dates    *DateParser
}

// NewService wires the order operations to their stores and to the user directory.
func NewService(orders *Store, fields *customfield.Store, attempts *callattempt.Store, users *UserDirectory) *Service {
	return &Service{orders: orders, fields: fields, attempts: attempts, users: users, dates: NewDateParser()}
}

// Create checks in and stores a new order made by by; an order without a call-attempt group gets
// the default one.
func (s *Service) Create(ctx context.Context, in Input, by web.Caller) (int64, error) {
	ch, err := s.check(ctx, in, ForCreate, callerOf(by))
	if err != nil {
		return 0, err
	}
	var defaultGroup *int64
	if !ch.CallAttemptGroupID.Set {
		if defaultGroup, err = s.attempts.DefaultID(ctx); err != nil {
			return 0, err
		}
	}
	o := New(defaultGroup)
	ch.ApplyTo(&o)
	o.CreatedBy, o.UpdatedBy = by.Ref(), by.Ref()
	id, _, err := s.orders.Create(ctx, o)
	return id, err
}

// Update checks in and applies it to order id. order.updated goes into the outbox in the
// update's transaction: it is published after the commit, and never for an update rolled back.
func (s *Service) Update(ctx context.Context, id int64, in Input, by web.Caller) error {
	caller := callerOf(by)
	ch, err := s.check(ctx, in, ForUpdate, caller)
	if err != nil {
		return err
	}
	updatedBy := by.Ref()
	_, err = s.orders.Update(ctx, id, func(o *Order) error {
		if !CanUpdate(caller, *o) {
			// Exactly the answer for a missing order: nobody learns what exists elsewhere.
			return notFound(id)
		}
		ch.ApplyTo(o)
		o.UpdatedBy = updatedBy
		return nil
	})
	return err
}

// Detail is order id as by may see it; an order by may not see is as missing as one that is not.
func (s *Service) Detail(ctx context.Context, id int64, by web.Caller) (View, error) {
	o, err := s.orders.Get(ctx, id)
	if err != nil {
		return View{}, err
	}
	caller, err := s.withGroups(ctx, callerOf(by))
	if err != nil {
		return View{}, err
	}
	if !SeesAll(caller) {
		ids, _, err := s.orders.VisibleTo(ctx, caller, &id)
		if err != nil {
			return View{}, err
		}
		if len(ids) == 0 {
			return View{}, notFound(id)
		}
	}
	return ViewOf(o), nil
}

// Visible is the set of orders one caller may see: every order, or those listed; HiddenContacts
// are those of them whose lead phones the caller sees masked.
type Visible struct {
	All            bool    `json:"all"`
	OrderIDs       []int64 `json:"orderIds"`
	HiddenContacts []int64 `json:"hiddenContacts"`
}

// VisibleOrders answers which orders caller may see (Store.VisibleTo).
func (s *Service) VisibleOrders(ctx context.Context, caller Caller) (Visible, error) {
	caller, err := s.withGroups(ctx, caller)
	if err != nil {
		return Visible{}, err
	}
	if SeesAll(caller) {
		return Visible{All: true, OrderIDs: []int64{}, HiddenContacts: []int64{}}, nil
	}
	ids, hidden, err := s.orders.VisibleTo(ctx, caller, nil)
	if err != nil {
		return Visible{}, err
	}
	return Visible{OrderIDs: ids, HiddenContacts: hidden}, nil
}

// InternalDetail is order id as other services read it, with its call-attempt group.
func (s *Service) InternalDetail(ctx context.Context, id int64) (InternalView, error) {
	o, err := s.orders.Get(ctx, id)
	if err != nil {
		return InternalView{}, err
	}
	return internalViewOf(ctx, o, s.attempts)
}

// withGroups adds the agent groups of an agent caller: their orders are the ones they or their
// groups work in.
func (s *Service) withGroups(ctx context.Context, c Caller) (Caller, error) {
	if !c.isAgent() {
		return c, nil
	}
	groups, err := s.users.AgentGroupsOf(ctx, c.UserID)
	if err != nil {
		return Caller{}, err
	}
	c.GroupIDs = groups
	return c, nil
}

// check runs every rule on a body: first those of the body alone, then the references against
// their catalogs, so that one answer names every broken field.
func (s *Service) check(ctx context.Context, in Input, mode Mode, caller Caller) (Changes, error) {
	fe := apperr.FieldErrors{}
	ch := in.Check(mode, s.dates, fe)
	ch.ClientUserID = OwnerFor(caller, mode, ch.ClientUserID)
	if err := s.checkReferences(ctx, &ch, caller, fe); err != nil {
		// The user service being down must not hide plain mistakes in the body: those come first.
		if apperr.KindOf(err) == apperr.Unavailable && len(fe) > 0 {
			return Changes{}, fe.Err()
		}
		return Changes{}, err
	}
	return ch, fe.Err()
}

// OwnerFor is the clientUserId an order gets from caller's body: a client's orders are its own
// whatever it sends; only callers who may set the owner (SetsOwner) set it.
func OwnerFor(caller Caller, mode Mode, sent optional.Value[int64]) optional.Value[int64] {
	switch {
	case caller.Group == access.Client && mode == ForCreate:
		return optional.Of(caller.UserID)
	case !SetsOwner(caller):
		return optional.Value[int64]{}
	}
	return sent
}

// checkReferences checks that what the body names exists: languages, custom fields (and their
// values' types), the call-attempt group, the owning client, agents and agent groups. Each
// lookup happens only when the body names something of its kind.
func (s *Service) checkReferences(ctx context.Context, ch *Changes, caller Caller, fe apperr.FieldErrors) error {
	if NeedsLanguages(*ch) {
		langs, err := s.orders.Languages(ctx)
		if err != nil {
			return err
		}
		CheckLanguages(*ch, langs, fe)
	}
	if ch.CustomValues.Present() && len(ch.CustomValues.V) > 0 {
		fields, err := s.fields.ByIDs(ctx, sentFieldIDs(*ch))
		if err != nil {
			return err
		}
		customfield.CheckValues(ch.CustomValues.V, fields, "order", fe)
	}
	if ch.CallAttemptGroupID.Present() {
		ok, err := s.attempts.Exists(ctx, ch.CallAttemptGroupID.V)
		if err != nil {
			return err
		}
		if !ok {
			fe.Addf("callAttemptGroupId", "no call-attempt group has id %d", ch.CallAttemptGroupID.V)
		}
	}
	if ch.ClientUserID.Present() && ch.ClientUserID.V != caller.UserID {
		ok, err := s.users.IsActiveClient(ctx, ch.ClientUserID.V)
		if err != nil {
			return err
		}
		if !ok {
			fe.Add("clientUserId", clientRule)
		}
	}
	if ch.AgentGroupIDs.Present() {
		missing, err := s.users.MissingAgentGroups(ctx, ch.AgentGroupIDs.V)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			fe.Add("agentGroupIds", "unknown agent group ids: "+joinIDs(missing))
		}
	}
	if ch.AgentUserIDs.Present() && len(ch.AgentUserIDs.V) > 0 {
		missing, err := s.users.MissingUsers(ctx, ch.AgentUserIDs.V)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			fe.Add("agentUserIds", "unknown user ids: "+joinIDs(missing))
		}
	}
	return nil
}

// NeedsLanguages reports whether ch names a language (the AI default, transfer-number names).
func NeedsLanguages(ch Changes) bool {
	needed := ch.AIDefaultLanguage.Present()
	for _, t := range ch.TransferNumbers.V {
		needed = needed || len(t.Names) > 0
	}
	return needed
}

// CheckLanguages adds a problem for every language ch names that is not one of langs.
func CheckLanguages(ch Changes, langs []string, fe apperr.FieldErrors) {
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
}

func sentFieldIDs(ch Changes) []int64 {
	ids := make([]int64, 0, len(ch.CustomValues.V))
	for id := range ch.CustomValues.V {
		ids = append(ids, id)
	}
	return ids
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ", ")
}
