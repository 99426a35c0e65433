package order_test

import (
	"context"
	"slices"
	"testing"

	"ccplatform/pkg/access"
	"ccplatform/services/order/internal/order"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Who sees an order is one statement (Store.VisibleTo), run by the detail check for one order and
// by the scope the other services read for all of them: both must agree with the rule.
func TestWhoSeesAnOrder(t *testing.T) {
	ctx := context.Background()
	store := order.NewStore(env.DB)
	owner := int64(10)
	o := storedOrder(t)
	o.Code += "-seen"
	o.ClientUserID, o.AgentUserIDs, o.AgentGroupIDs, o.ShowLeadContactsToAgent = &owner, []int64{20}, []int64{7}, false
	id, _, err := store.Create(ctx, o)
	require.NoError(t, err)
	unowned := storedOrder(t)
	unowned.Code += "-unowned"
	unowned.ClientUserID, unowned.AgentUserIDs, unowned.AgentGroupIDs = nil, nil, nil
	unownedID, _, err := store.Create(ctx, unowned)
	require.NoError(t, err)

	cases := []struct {
		name string
		c    order.Actor
		sees bool
	}{
		{"the owner", order.Actor{UserID: 10, Group: access.Client}, true},
		{"another client", order.Actor{UserID: 11, Group: access.Client}, false},
		{"an agent of the order", order.Actor{UserID: 20, Group: access.CallCenter}, true},
		{"an agent of one of its groups", order.Actor{UserID: 21, Group: access.CallCenter, GroupIDs: []int64{3, 7}}, true},
		{"a senior of one of its groups", order.Actor{UserID: 22, Group: access.CallCenterSenior, GroupIDs: []int64{7}}, true},
		{"an agent elsewhere", order.Actor{UserID: 23, Group: access.CallCenter, GroupIDs: []int64{3}}, false},
		{"the owner's id in another group", order.Actor{UserID: 10, Group: access.CallCenter}, false},
		{"no group", order.Actor{UserID: 20, Group: access.None}, false},
	}
	for _, tc := range cases {
		assert.False(t, order.SeesAll(tc.c), tc.name)
		one, hidden, err := store.VisibleTo(ctx, tc.c, &id)
		require.NoError(t, err)
		assert.Equal(t, tc.sees, slices.Contains(one, id), "detail: %s", tc.name)
		agent := tc.c.Group == access.CallCenter || tc.c.Group == access.CallCenterSenior
		assert.Equal(t, tc.sees && agent, slices.Contains(hidden, id), "contacts hidden from agents: %s", tc.name)
		all, _, err := store.VisibleTo(ctx, tc.c, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.sees, slices.Contains(all, id), "scope: %s", tc.name)
		assert.NotContains(t, all, unownedID, "nobody but staff sees an order without client or agents: %s", tc.name)
		other, _, err := store.VisibleTo(ctx, tc.c, &unownedID)
		require.NoError(t, err)
		assert.Empty(t, other, tc.name)
	}
	for _, g := range []access.Group{access.Admin, access.Moderator, access.Arbitration} {
		assert.True(t, order.SeesAll(order.Actor{UserID: 1, Group: g}), string(g))
	}
	assert.True(t, order.SeesAll(order.Actor{}), "another service")
}
