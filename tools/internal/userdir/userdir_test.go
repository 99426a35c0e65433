package userdir

import (
	"context"
	"testing"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/usertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var userURL string

// TestMain starts the real user service with its demo data (nine users, two agent groups).
func TestMain(m *testing.M) {
	usertest.Main(m, "tools_userdir", func(url string) int {
		userURL = url
		return m.Run()
	})
}

// directory asks the test's user service, pageSize items a request.
func directory(t *testing.T, pageSize int) *Directory {
	t.Helper()
	c := svcclient.New("user", userURL, usertest.Token, 10*time.Second)
	t.Cleanup(c.CloseIdleConnections)
	d := New(c)
	d.pageSize = pageSize
	return d
}

func emails(users []ccapi.User) []string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = u.Email
	}
	return out
}

func TestByEmails(t *testing.T) {
	ctx := context.Background()
	// Two a page: the users are found on every page, not only the first.
	d := directory(t, 2)
	found, err := d.ByEmails(ctx, "admin@demo.callcenter.local", " Former.Agent@demo.callcenter.local")
	require.NoError(t, err)
	admin := found["admin@demo.callcenter.local"]
	assert.Positive(t, admin.Id)
	assert.Equal(t, ccapi.AccessGroupAdmin, admin.AccessGroup)
	assert.True(t, admin.IsActive)
	former := found[" Former.Agent@demo.callcenter.local"]
	assert.Equal(t, "former.agent@demo.callcenter.local", former.Email, "found as the user service stores the address")
	assert.False(t, former.IsActive, "inactive users are found too")

	u, err := d.ByEmail(ctx, "agent.smith@demo.callcenter.local")
	require.NoError(t, err)
	assert.Equal(t, ccapi.AccessGroupCallCenter, u.AccessGroup)

	_, err = d.ByEmails(ctx, "admin@demo.callcenter.local", "nobody@demo.callcenter.local")
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err))
	assert.ErrorContains(t, err, "nobody@demo.callcenter.local")
}

func TestActive(t *testing.T) {
	ctx := context.Background()
	d := directory(t, 2)
	agents, err := d.Active(ctx, access.CallCenter, access.CallCenterSenior)
	require.NoError(t, err)
	assert.Equal(t, []string{"agent.petrov@demo.callcenter.local", "agent.smith@demo.callcenter.local",
		"senior@demo.callcenter.local"}, emails(agents), "group by group, the inactive agent left out")

	all, err := d.Active(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 8, "every active demo user, on four pages")
	assert.NotContains(t, emails(all), "former.agent@demo.callcenter.local")
	for _, u := range all {
		assert.True(t, u.IsActive, u.Email)
	}

	admins, err := directory(t, 100).Active(ctx, access.Admin)
	require.NoError(t, err)
	assert.Equal(t, []string{"admin@demo.callcenter.local"}, emails(admins))
}

func TestAgentGroups(t *testing.T) {
	groups, err := directory(t, 1).AgentGroups(context.Background())
	require.NoError(t, err)
	require.Len(t, groups, 2)
	assert.Equal(t, "Sales", groups[0].Names.Gb)
	assert.Equal(t, "Продажи", groups[0].Names.Ru)
	assert.Equal(t, "Customer support", groups[1].Names.Gb)
	assert.Less(t, groups[0].Id, groups[1].Id, "oldest first")
}

func TestUnreachableUserService(t *testing.T) {
	d := New(svcclient.New("user", "http://127.0.0.1:1", usertest.Token, time.Second))
	_, err := d.ByEmail(context.Background(), "admin@demo.callcenter.local")
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err))
	assert.ErrorContains(t, err, "user service /v2/user/list")
}
