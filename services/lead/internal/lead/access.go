package lead

import (
	"context"
	"strconv"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/contacts"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
)

// Leads belong to orders, and who sees which order is the order service's rule (pkg/visibleorders):
// a lead in an order outside the caller's scope is answered exactly as a missing lead, and an
// orderId outside it as a missing order.

// Scope is the orders caller may see, cached: for masking what a check already let through.
func (s *Service) Scope(ctx context.Context, caller web.Caller) (visibleorders.Visible, error) {
	return s.orders.ScopeFor(ctx, caller)
}

// FreshScope is the orders caller may see as the order service answers now, for lists: an order
// created or assigned just before is in it.
func (s *Service) FreshScope(ctx context.Context, caller web.Caller) (visibleorders.Visible, error) {
	return s.orders.FreshScope(ctx, caller)
}

// CheckVisible refuses a lead that does not exist or lies outside caller's orders, with the same
// answer for both.
func (s *Service) CheckVisible(ctx context.Context, caller web.Caller, id int64) error {
	scope, err := s.Scope(ctx, caller)
	if err != nil || scope.All {
		return err
	}
	l, err := s.store.Get(ctx, id)
	if err != nil {
		return err
	}
	_, ok, err := s.orders.CheckScope(ctx, caller, l.OrderID)
	if err == nil && !ok {
		return apperr.NotFoundf("lead %d does not exist", id)
	}
	return err
}

// CheckUpdate refuses an update of a lead caller may not see (as a missing lead) and, for an
// agent (call-center), one the order's agentLeadEditMode does not allow now: never, or
// during-call outside the edit window after the agent's own call with the lead.
func (s *Service) CheckUpdate(ctx context.Context, caller web.Caller, id int64) error {
	if err := s.CheckVisible(ctx, caller, id); err != nil {
		return err
	}
	if access.Group(caller.AccessGroup) != access.CallCenter {
		return nil
	}
	l, err := s.store.Get(ctx, id)
	if err != nil {
		return err
	}
	o, err := s.orders.Get(ctx, l.OrderID)
	if err != nil {
		return err
	}
	window := s.rules.EditWindow
	if window <= 0 {
		window = DefaultEditWindow
	}
	switch o.AgentLeadEditMode {
	case "always":
		return nil
	case "during-call":
		recent, err := s.store.CalledRecently(ctx, id, caller.UserID, s.now().Add(-window))
		if err != nil || recent {
			return err
		}
		return apperr.New(apperr.Forbidden, "order %d lets agents edit a lead only within %s after their own call with it (agentLeadEditMode during-call)", o.ID, window)
	}
	return apperr.New(apperr.Forbidden, "order %d does not let agents edit its leads (agentLeadEditMode %s)", o.ID, o.AgentLeadEditMode)
}

// CheckCreate refuses a create in an order outside caller's scope (the same field error as an
// order that does not exist) and, for an agent, in an order that does not let agents create leads.
func (s *Service) CheckCreate(ctx context.Context, caller web.Caller, ch Changes) error {
	return s.checkCreate(ctx, caller, ch, s.orders.CheckScope)
}

// CheckCreateAsOf is CheckCreate for a create asked for at asOf and made later (an import's rows):
// a scope read since asOf answers every row, rather than one question per row that misses.
func (s *Service) CheckCreateAsOf(ctx context.Context, caller web.Caller, ch Changes, asOf time.Time) error {
	return s.checkCreate(ctx, caller, ch, func(ctx context.Context, caller web.Caller, id int64) (visibleorders.Visible, bool, error) {
		return s.orders.CheckScopeAsOf(ctx, caller, id, asOf)
	})
}

func (s *Service) checkCreate(ctx context.Context, caller web.Caller, ch Changes,
	inScope func(context.Context, web.Caller, int64) (visibleorders.Visible, bool, error)) error {
	if !ch.OrderID.Present() {
		return nil
	}
	id := ch.OrderID.V
	scope, ok, err := inScope(ctx, caller, id)
	if err != nil || scope.All {
		return err
	}
	if !ok {
		return apperr.Field("orderId", "no order has id "+strconv.FormatInt(id, 10))
	}
	g := access.Group(caller.AccessGroup)
	if g != access.CallCenter && g != access.CallCenterSenior {
		return nil
	}
	o, err := s.orders.Get(ctx, id)
	if err != nil {
		return err
	}
	if !o.AgentLeadCreationIsAllowed {
		return apperr.New(apperr.Forbidden, "order %d does not let agents create leads (agentLeadCreationIsAllowed is false)", id)
	}
	return nil
}

// CheckUpdateFields refuses what caller's group may not change: arbitration settles a lead's
// status and nothing else.
func CheckUpdateFields(caller web.Caller, ch Changes) error {
	if access.Group(caller.AccessGroup) != access.Arbitration {
		return nil
	}
	if others := ch.setFields(); len(others) > 0 {
		return apperr.New(apperr.Forbidden, "arbitration may change only statusId, not %s", others[0])
	}
	return nil
}

// Masked is v with its phones masked when scope hides the contacts of its order (an agent in an
// order with showLeadContactsToAgent off).
func Masked(v View, scope visibleorders.Visible) View {
	if scope.ShowsContacts(v.OrderID) {
		return v
	}
	v.Phone = contacts.Mask(v.Phone)
	v.MessengerPhone = contacts.MaskPtr(v.MessengerPhone)
	return v
}

// setFields names the fields ch changes besides statusId, in the v2 names.
func (ch Changes) setFields() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("leadType", ch.LeadType.Set)
	add("phone", ch.Phone.Set)
	add("orderId", ch.OrderID.Set)
	add("orderCode", ch.OrderCode.Set)
	add("messengerUserName", ch.MessengerUserName.Set)
	add("messengerPhone", ch.MessengerPhone.Set)
	add("messengerId", ch.MessengerID.Set)
	add("socialNetworkId", ch.SocialNetworkID.Set)
	add("socialLogin", ch.SocialLogin.Set)
	add("name", ch.Name.Set)
	add("sourceComment", ch.SourceComment.Set)
	add("externalIdCrmA", ch.ExternalIDCrmA.Set)
	add("externalIdCrmB", ch.ExternalIDCrmB.Set)
	add("externalIdCrmC", ch.ExternalIDCrmC.Set)
	add("externalIdCrmD", ch.ExternalIDCrmD.Set)
	add("priority", ch.Priority.Set)
	add("utcOffset", ch.UTCOffset.Set)
	add("source", ch.Source.Set)
	add("adCampaignId", ch.AdCampaignID.Set)
	add("customValues", ch.CustomValues.Set)
	add("planningCallDateTime", ch.PlanningCallAt.Set)
	return out
}
