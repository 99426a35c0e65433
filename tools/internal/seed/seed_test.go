package seed

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/demo"
	"ccplatform/tools/internal/userdir"
	"ccplatform/tools/internal/usertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var userURL string

// TestMain starts the real user service, with its demo data: the steps find the demo users and
// agent groups through its API.
func TestMain(m *testing.M) {
	usertest.Main(m, "tools_seed", func(url string) int {
		userURL = url
		return m.Run()
	})
}

func directory(t *testing.T) *userdir.Directory {
	t.Helper()
	c := svcclient.New("user", userURL, usertest.Token, 10*time.Second)
	t.Cleanup(c.CloseIdleConnections)
	return userdir.New(c)
}

func TestSkippedStep(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, Run(context.Background(), &out, Skipped("order custom fields", "ORDER_URL is empty")))
	assert.Equal(t, "seed order custom fields: skipped: ORDER_URL is empty\n", out.String())
}

func TestRunStopsAtFirstFailure(t *testing.T) {
	ran := false
	failing := Step{Name: "broken", Run: func(context.Context) (string, error) { return "", assert.AnError }}
	later := Step{Name: "later", Run: func(context.Context) (string, error) { ran = true; return "", nil }}
	err := Run(context.Background(), &bytes.Buffer{}, failing, later)
	require.ErrorIs(t, err, assert.AnError)
	assert.Contains(t, err.Error(), "seed broken")
	assert.False(t, ran)
}

// TestAsUserActsForTheUser checks that a step's requests act for the user with the e-mail: the
// user service shows an agent no user but themselves, and an admin every user.
func TestAsUserActsForTheUser(t *testing.T) {
	ctx := context.Background()
	users := directory(t)
	admin, err := users.ByEmail(ctx, demo.AdminEmail)
	require.NoError(t, err)
	c := svcclient.New("user", userURL, usertest.Token, 10*time.Second)
	t.Cleanup(c.CloseIdleConnections)
	readAdmin := Step{Name: "read the admin", Run: func(ctx context.Context) (string, error) {
		var u ccapi.User
		err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/v2/user/detail/%d", admin.Id), nil, &u)
		return u.Email, err
	}}

	var out bytes.Buffer
	require.NoError(t, Run(ctx, &out, readAdmin, AsUser(users, demo.AdminEmail, readAdmin)))
	assert.Equal(t, "seed read the admin: "+demo.AdminEmail+"\n"+"seed read the admin: "+demo.AdminEmail+"\n", out.String())

	err = Run(ctx, &out, AsUser(users, "agent.smith@demo.callcenter.local", readAdmin))
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err), "an agent sees only themselves: the request acted for the agent")

	err = Run(ctx, &out, AsUser(users, "nobody@demo.callcenter.local", readAdmin))
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err))
	assert.ErrorContains(t, err, "seed read the admin: author nobody@demo.callcenter.local")
}

// TestDemoOrdersNameTheUserServicesDemoData checks the demo orders against the demo data
// user-admin seed loads: every agent is an active user of a call-center group, and every agent
// group exists, so the orders step finds an id for each name.
func TestDemoOrdersNameTheUserServicesDemoData(t *testing.T) {
	ctx := context.Background()
	users := directory(t)
	orders := demo.Orders(time.Now())
	refs, err := userRefs(ctx, users, orders)
	require.NoError(t, err)
	agents, err := users.Active(ctx, access.CallCenter, access.CallCenterSenior)
	require.NoError(t, err)
	isAgent := map[int]bool{}
	for _, u := range agents {
		isAgent[u.Id] = true
	}
	for _, o := range orders {
		for _, e := range o.AgentEmails {
			assert.True(t, isAgent[refs.users[e]], "%s (order %s) is an active call-center user", e, o.Code)
		}
		for _, g := range o.AgentGroupNames {
			assert.Positive(t, refs.groups[g], "agent group %q (order %s) exists", g, o.Code)
		}
	}
}
