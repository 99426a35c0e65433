package access

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGroupsCoverTheirScopes(t *testing.T) {
	for _, s := range Scopes() {
		assert.True(t, Admin.Covers(s), s)
		assert.False(t, None.Covers(s), s)
	}
	assert.True(t, Client.Covers(OrdersWrite))
	assert.False(t, Client.Covers(NotificationsSend))
	assert.False(t, Client.Covers(AgentGroupsWrite))
	assert.True(t, CallCenterSenior.Covers(NotificationsSend))
	assert.False(t, CallCenter.Covers(OrdersWrite))
	assert.False(t, Arbitration.Covers(UsersRead))
	assert.True(t, Group("").Valid())
	assert.False(t, Group("root").Valid())
}

func TestParseScopes(t *testing.T) {
	got, err := ParseScopes([]string{"leads:read", " leads:write", "leads:read"})
	require.NoError(t, err)
	assert.Equal(t, []Scope{LeadsRead, LeadsWrite}, got)
	_, err = ParseScopes([]string{"leads:delete"})
	assert.ErrorContains(t, err, `unknown scope "leads:delete"`)
	got, err = ParseScopes(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}
