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
		c         Actor
		o         Order
		canUpdate bool
	}{
		{"internal", Actor{}, o, true},
		{"admin", Actor{UserID: 1, Group: access.Admin}, o, true},
		{"moderator", Actor{UserID: 2, Group: access.Moderator}, o, true},
		{"arbitration reads", Actor{UserID: 3, Group: access.Arbitration}, o, false},
		{"the owner", Actor{UserID: 10, Group: access.Client}, o, true},
		{"another client", Actor{UserID: 11, Group: access.Client}, o, false},
		{"a client and an order without owner", Actor{UserID: 10, Group: access.Client}, unowned, false},
		{"an agent of the order", Actor{UserID: 20, Group: access.CallCenter}, o, false},
		{"an agent of one of its groups", Actor{UserID: 21, Group: access.CallCenter, GroupIDs: []int64{3, 7}}, o, false},
		{"a senior of one of its groups", Actor{UserID: 22, Group: access.CallCenterSenior, GroupIDs: []int64{7}}, o, false},
		{"an agent elsewhere", Actor{UserID: 23, Group: access.CallCenter, GroupIDs: []int64{3}}, o, false},
		{"no group", Actor{UserID: 24, Group: access.None}, o, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.canUpdate, CanUpdate(tc.c, tc.o), "update: %s", tc.name)
	}
	assert.True(t, SetsOwner(Actor{UserID: 1, Group: access.Admin}))
	assert.False(t, SetsOwner(Actor{UserID: 10, Group: access.Client}))
}
