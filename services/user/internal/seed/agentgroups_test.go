package seed_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/migrations"
	"ccplatform/services/user/internal/seed"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDemoAgentGroupsUseDemoAgents(t *testing.T) {
	byEmail := map[string]user.User{}
	for _, u := range seed.DemoUsers(time.Now()) {
		byEmail[u.Email] = u
	}
	for _, g := range seed.DemoAgentGroups() {
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

func TestAgentGroupsStepIsIdempotent(t *testing.T) {
	ctx := context.Background()
	conn, err := db.Open(ctx, testURL, migrations.Schema.Name, 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, migrations.Schema.Up(ctx, conn))
	users := user.NewStore(conn)
	groups := agentgroup.NewStore(conn)
	steps := []seed.Step{seed.Users(users, time.Now), seed.AgentGroups(groups, users)}

	var out bytes.Buffer
	require.NoError(t, seed.Run(ctx, &out, steps...))
	first, err := groups.List(ctx, agentgroup.Filter{})
	require.NoError(t, err)
	require.Len(t, first, len(seed.DemoAgentGroups()))
	require.NoError(t, seed.Run(ctx, &out, steps...))
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
	assert.Contains(t, out.String(), "seed agent groups: 2 demo agent groups ensured")
}

func TestAgentGroupsStepNeedsTheUsers(t *testing.T) {
	ctx := context.Background()
	conn := servicetest.DB(t, testURL, "users", "agent_groups")
	err := seed.Run(ctx, &bytes.Buffer{}, seed.AgentGroups(agentgroup.NewStore(conn), user.NewStore(conn)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "seed agent groups")
}
