package order

import (
	"testing"

	"ccplatform/pkg/access"

	"github.com/stretchr/testify/assert"
)

func TestWhoUpdatesAnOrder(t *testing.T) {
	owner := int64(10)
	o := Order{ClientUserID: &owner, AgentUserIDs: []int64{20}, AgentGroupIDs: []int64{7}}
	unowned := Order{}
	cases := []struct {
		name      string
		c         Caller
		o         Order
		canUpdate bool
	}{
		{"internal", Caller{}, o, true},
		{"admin", Caller{UserID: 1, Group: access.Admin}, o, true},
		{"moderator", Caller{UserID: 2, Group: access.Moderator}, o, true},
		{"arbitration reads", Caller{UserID: 3, Group: access.Arbitration}, o, false},
		{"the owner", Caller{UserID: 10, Group: access.Client}, o, true},
		{"another client", Caller{UserID: 11, Group: access.Client}, o, false},
		{"a client and an order without owner", Caller{UserID: 10, Group: access.Client}, unowned, false},
		{"an agent of the order", Caller{UserID: 20, Group: access.CallCenter}, o, false},
		{"an agent of one of its groups", Caller{UserID: 21, Group: access.CallCenter, GroupIDs: []int64{3, 7}}, o, false},
		{"a senior of one of its groups", Caller{UserID: 22, Group: access.CallCenterSenior, GroupIDs: []int64{7}}, o, false},
		{"an agent elsewhere", Caller{UserID: 23, Group: access.CallCenter, GroupIDs: []int64{3}}, o, false},
		{"no group", Caller{UserID: 24, Group: access.None}, o, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.canUpdate, CanUpdate(tc.c, tc.o), "update: %s", tc.name)
	}
	assert.True(t, SetsOwner(Caller{UserID: 1, Group: access.Admin}))
	assert.False(t, SetsOwner(Caller{UserID: 10, Group: access.Client}))
}
