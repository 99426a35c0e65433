package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"ccplatform/clients/go/ccapi"
)

// demoAdmin is the demo user whose key sends the mix; otherCaller the demo client whose key asks
// for the admin's objects; badKeyUser the demo user the bad input's API keys are made for.
const (
	demoAdmin   = "admin@demo.callcenter.local"
	otherCaller = "client@demo.callcenter.local"
	badKeyUser  = "moderator@demo.callcenter.local"
)

// setup finds the demo data the mix reads (users, demo orders with their calls, agent groups) and
// makes what the mix works on: its lead orders (one of which dials) with a few leads each, and
// the webhooks to the receiver. Its requests are not measured.
func (m *mix) setup(ctx context.Context) error {
	users, err := m.api.ListUsersWithResponse(ctx, &ccapi.ListUsersParams{Limit: ptr(100)})
	if err := need("list users", users, err); err != nil {
		return err
	}
	for _, u := range users.JSON200.Data.List {
		m.users.add(u.Id)
		switch string(u.Email) {
		case demoAdmin:
			m.adminID = u.Id
		case badKeyUser:
			m.badUserID = u.Id
		}
	}
	if m.adminID == 0 || m.badUserID == 0 {
		return fmt.Errorf("%s or %s is not among the users", demoAdmin, badKeyUser)
	}
	// The demo orders are the orders of the demo leads; their calls are read from them.
	leads, err := m.api.ListLeadsWithResponse(ctx, &ccapi.ListLeadsParams{Limit: ptr(100)})
	if err := need("list leads", leads, err); err != nil {
		return err
	}
	for _, l := range leads.JSON200.Data.List {
		if !slices.Contains(m.callOrders, l.OrderId) {
			m.callOrders = append(m.callOrders, l.OrderId)
			m.orders.add(l.OrderId)
		}
	}
	for _, order := range m.callOrders {
		calls, err := m.api.ListCallsWithResponse(ctx, &ccapi.ListCallsParams{OrderIds: &ccapi.IDList{order}, Limit: ptr(100)})
		if err := need("list calls", calls, err); err != nil {
			return err
		}
		for _, c := range calls.JSON200.Data.List {
			m.calls.add(c.Id)
		}
	}
	if m.calls.pick() == 0 {
		return fmt.Errorf("the demo data has no calls")
	}
	groups, err := m.api.ListAgentGroupsWithResponse(ctx, &ccapi.ListAgentGroupsParams{Limit: ptr(100)})
	if err := need("list agent groups", groups, err); err != nil {
		return err
	}
	for _, g := range groups.JSON200.Data.List {
		m.groups.add(g.Id)
	}
	if err := m.makeLeadOrders(ctx); err != nil {
		return err
	}
	return m.makeHooks(ctx)
}

// makeLeadOrders makes the three orders the mix sends leads to, the first of which dials at any
// hour (every day 00:00–24:00, in UTC whatever the lead's zone), three leads in each, and the
// order of the bad input.
func (m *mix) makeLeadOrders(ctx context.Context) error {
	attempts, err := m.api.CreateCallAttemptGroupWithResponse(ctx, nil, ccapi.CallAttemptGroupCreate{Title: "Soak dialing", Intervals: []int{30, 120}})
	if err := need("create call-attempt group", attempts, err); err != nil {
		return err
	}
	for i := range 4 {
		body := m.newOrder(fmt.Sprintf("Soak leads %d", i+1))
		if i == 0 {
			day := []string{"00:00", "24:00"}
			body.CallSchedule = &[][]string{day, day, day, day, day, day, day}
			body.AutoDialingEnabled, body.IgnoreLeadTimezone = ptr(true), ptr(true)
			body.CallAttemptGroupId = ptr(attempts.JSON200.Data.Id)
		}
		created, err := m.api.CreateOrderWithResponse(ctx, nil, body)
		if err := need("create order", created, err); err != nil {
			return err
		}
		detail, err := m.api.GetOrderWithResponse(ctx, created.JSON200.Data.Id)
		if err := need("order detail", detail, err); err != nil {
			return err
		}
		o := leadOrder{created.JSON200.Data.Id, detail.JSON200.Data.Code}
		if i == 3 {
			m.badOrder = o
			break
		}
		m.leadOrders = append(m.leadOrders, o)
		m.orders.add(o.id)
	}
	for _, o := range m.leadOrders {
		for range 3 {
			body := ccapi.LeadCreate{LeadType: ccapi.LeadCreateLeadTypeStraight, Phone: m.phone(), OrderId: o.id, OrderCode: o.code}
			lead, err := m.api.CreateLeadWithResponse(ctx, nil, body)
			if err := need("create lead", lead, err); err != nil {
				return err
			}
			m.leads.add(lead.JSON200.Data.Id)
		}
	}
	return nil
}

// makeHooks starts the receiver and subscribes two webhooks to it, which stay for the run.
func (m *mix) makeHooks(ctx context.Context) error {
	m.receiver = newReceiver()
	for i := range 2 {
		r, err := m.api.CreateWebhookWithResponse(ctx, nil, m.hookInput(fmt.Sprintf("soak %d", i+1)))
		if err := need("create webhook", r, err); err != nil {
			return err
		}
		m.hooks = append(m.hooks, r.JSON200.Data.Id)
	}
	return nil
}

// need is nil when a request of setup got its 200.
func need(what string, r answer, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if r.StatusCode() != http.StatusOK {
		return fmt.Errorf("%s: status %d: %.300s", what, r.StatusCode(), bodyOf(r))
	}
	return nil
}
