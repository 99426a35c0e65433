package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"ccplatform/clients/go/ccapi"
)

// The operations on orders, call-attempt groups, calls, users and agent groups.

func (m *mix) newOrder(title string) ccapi.OrderCreate {
	return ccapi.OrderCreate{ServiceTitle: "Soak", Title: title, Status: ccapi.OrderCreateStatusSuccess, SipEndpointIds: []int{1}}
}

func (m *mix) orderCreate(ctx context.Context) {
	body := m.newOrder(fmt.Sprintf("Soak order %d", m.n()))
	if r, ok := measure(m, "createOrder", "", success, func() (*ccapi.CreateOrderResponse, error) {
		return m.api.CreateOrderWithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.orders.add(r.JSON200.Data.Id)
	}
}

func (m *mix) orderUpdate(ctx context.Context) {
	body := ccapi.OrderWritable{Title: ptr(fmt.Sprintf("Soak order renamed %d", m.n()))}
	measure(m, "updateOrder", "", success, func() (*ccapi.UpdateOrderResponse, error) {
		return m.api.UpdateOrderWithResponse(ctx, m.orders.pick(), body)
	})
}

func (m *mix) orderDetail(ctx context.Context) {
	measure(m, "getOrder", "", success, func() (*ccapi.GetOrderResponse, error) {
		return m.api.GetOrderWithResponse(ctx, m.orders.pick())
	})
}

func (m *mix) callAttemptCreate(ctx context.Context) {
	body := ccapi.CallAttemptGroupCreate{Title: fmt.Sprintf("Soak attempts %d", m.n()), Intervals: []int{30, 120}}
	measure(m, "createCallAttemptGroup", "", success, func() (*ccapi.CreateCallAttemptGroupResponse, error) {
		return m.api.CreateCallAttemptGroupWithResponse(ctx, nil, body)
	})
}

func (m *mix) callList(ctx context.Context) {
	order := m.callOrders[rand.IntN(len(m.callOrders))]
	measure(m, "listCalls", "", success, func() (*ccapi.ListCallsResponse, error) {
		return m.api.ListCallsWithResponse(ctx, &ccapi.ListCallsParams{OrderIds: &ccapi.IDList{order}, Limit: ptr(20)})
	})
}

func (m *mix) callDetail(ctx context.Context) {
	measure(m, "getCall", "", success, func() (*ccapi.GetCallResponse, error) {
		return m.api.GetCallWithResponse(ctx, m.calls.pick())
	})
}

func (m *mix) userList(ctx context.Context) {
	measure(m, "listUsers", "", success, func() (*ccapi.ListUsersResponse, error) {
		return m.api.ListUsersWithResponse(ctx, &ccapi.ListUsersParams{Limit: ptr(20)})
	})
}

func (m *mix) userListAlias(ctx context.Context) {
	measure(m, "listUsersAlias", "", success, func() (*ccapi.ListUsersAliasResponse, error) {
		return m.api.ListUsersAliasWithResponse(ctx, nil)
	})
}

func (m *mix) userDetail(ctx context.Context) {
	measure(m, "getUser", "", success, func() (*ccapi.GetUserResponse, error) {
		return m.api.GetUserWithResponse(ctx, m.users.pick())
	})
}

func (m *mix) agentGroupCreate(ctx context.Context) {
	body := ccapi.AgentGroupCreate{Names: map[string]any{"ru": "Сок", "gb": fmt.Sprintf("Soak %d", m.n())}, AgentIds: []int{}}
	if r, ok := measure(m, "createAgentGroup", "", success, func() (*ccapi.CreateAgentGroupResponse, error) {
		return m.api.CreateAgentGroupWithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.groups.add(r.JSON200.Data.Id)
	}
}

func (m *mix) agentGroupUpdate(ctx context.Context) {
	var body ccapi.AgentGroupWritable
	body.Names = &struct {
		Gb *string `json:"gb,omitempty"`
		Ru *string `json:"ru,omitempty"`
	}{Gb: ptr(fmt.Sprintf("Soak renamed %d", m.n())), Ru: ptr("Сок")}
	measure(m, "updateAgentGroup", "", success, func() (*ccapi.UpdateAgentGroupResponse, error) {
		return m.api.UpdateAgentGroupWithResponse(ctx, m.groups.pick(), body)
	})
}

func (m *mix) agentGroupList(ctx context.Context) {
	measure(m, "listAgentGroups", "", success, func() (*ccapi.ListAgentGroupsResponse, error) {
		return m.api.ListAgentGroupsWithResponse(ctx, &ccapi.ListAgentGroupsParams{Limit: ptr(20)})
	})
}

func (m *mix) agentStateList(ctx context.Context) {
	measure(m, "listAgentStates", "", success, func() (*ccapi.ListAgentStatesResponse, error) {
		return m.api.ListAgentStatesWithResponse(ctx, &ccapi.ListAgentStatesParams{Limit: ptr(20)})
	})
}

func (m *mix) agentStateSet(ctx context.Context) {
	state := ccapi.SetAvailable
	if m.n()%2 == 0 {
		state = ccapi.SetPaused
	}
	measure(m, "setAgentState", "", success, func() (*ccapi.SetAgentStateResponse, error) {
		return m.api.SetAgentStateWithResponse(ctx, ccapi.AgentStateSet{State: state})
	})
}

// reportPeriod is the last day, as the reports read it.
func reportPeriod() (from, to string) {
	now := time.Now().UTC()
	return now.Add(-24 * time.Hour).Format(time.RFC3339), now.Format(time.RFC3339)
}

func (m *mix) reportOrders(ctx context.Context) {
	from, to := reportPeriod()
	ids := ccapi.IDList{m.leadOrders[0].id}
	interval := ccapi.ReportOrdersParamsIntervalHour
	measure(m, "reportOrders", "", success, func() (*ccapi.ReportOrdersResponse, error) {
		return m.api.ReportOrdersWithResponse(ctx, &ccapi.ReportOrdersParams{OrderIds: &ids, From: from, To: to, Interval: &interval})
	})
}

func (m *mix) reportAgents(ctx context.Context) {
	from, to := reportPeriod()
	interval := ccapi.ReportAgentsParamsIntervalTotal
	measure(m, "reportAgents", "", success, func() (*ccapi.ReportAgentsResponse, error) {
		return m.api.ReportAgentsWithResponse(ctx, &ccapi.ReportAgentsParams{From: from, To: to, Interval: &interval})
	})
}
