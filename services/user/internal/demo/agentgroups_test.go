package demo_test

import (
	"context"
	"testing"
	"time"

	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/demo"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDemoAgentGroupsUseDemoAgents(t *testing.T) {
	byEmail := map[string]user.User{}
	for _, u := range demo.Users(time.Now()) {
		byEmail[u.Email] = u
	}
	for _, g := range demo.AgentGroups() {
		assert.NotEmpty(t, g.Names.RU)
		assert.NotEmpty(t, g.Names.GB)
		require.NotEmpty(t, g.AgentEmails)
		for _, e := range g.AgentEmails {
			u, ok := byEmail[e]
			require.True(t, ok, "%s is a demo user", e)
			assert.True(t, u.IsActive, e)
			assert.Contains(t, []user.AccessGroup{user.GroupCallCenter, user.GroupCallCenterSenior}, u.AccessGroup, e)
		}
	}
}

func TestLoadAgentGroupsIsIdempotent(t *testing.T) {
	ctx := context.Background()
	conn := servicetest.DB(t, testURL, "users", "agent_groups")
	users := user.NewStore(conn)
	groups := agentgroup.NewStore(conn)
	load := func() string {
		t.Helper()
		_, err := demo.LoadUsers(ctx, users, time.Now())
		require.NoError(t, err)
		summary, err := demo.LoadAgentGroups(ctx, groups, users)
		require.NoError(t, err)
		return summary
	}

	assert.Equal(t, "2 demo agent groups ensured", load())
	first, err := groups.List(ctx, agentgroup.Filter{})
	require.NoError(t, err)
	require.Len(t, first, len(demo.AgentGroups()))
	load()
	second, err := groups.List(ctx, agentgroup.Filter{})
	require.NoError(t, err)
	require.Len(t, second, len(first), "running twice adds no groups")

	petrov, err := users.GetByEmail(ctx, "agent.petrov@demo.callcenter.local")
	require.NoError(t, err)
	senior, err := users.GetByEmail(ctx, "senior@demo.callcenter.local")
	require.NoError(t, err)
	for i := range first {
		assert.Equal(t, first[i].ID, second[i].ID)
		assert.Equal(t, first[i].AgentIDs, second[i].AgentIDs)
	}
	assert.Equal(t, agentgroup.Names{RU: "Продажи", GB: "Sales"}, second[0].Names)
	assert.Equal(t, []int64{petrov.ID, senior.ID}, second[0].AgentIDs)
}

func TestLoadAgentGroupsNeedsTheUsers(t *testing.T) {
	conn := servicetest.DB(t, testURL, "users", "agent_groups")
	_, err := demo.LoadAgentGroups(context.Background(), agentgroup.NewStore(conn), user.NewStore(conn))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `agent of "Sales"`)
}
