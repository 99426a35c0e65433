package agentgroup_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/dbtest"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_agentgroup", func(url string) int {
		testURL = url
		return m.Run()
	})
}

// openDB gives a test empty users and agent-group tables in the package's database.
func openDB(t *testing.T) *sqlx.DB {
	t.Helper()
	return servicetest.DB(t, testURL, "users", "agent_groups")
}

// agents makes n users and returns their ids.
func agents(t *testing.T, conn *sqlx.DB, n int) []int64 {
	t.Helper()
	users := user.NewStore(conn)
	ids := make([]int64, n)
	for i := range ids {
		id, err := users.Create(context.Background(), user.User{
			Email: fmt.Sprintf("agent%d@example.com", i), IsActive: true, AccessGroup: user.GroupCallCenter,
			InterfaceLanguageCode: "ru", PhoneMode: user.PhoneDefault,
		})
		require.NoError(t, err)
		ids[i] = id
	}
	return ids
}

func s(v string) *string { return &v }

func changes(ru, gb string, ids ...int64) agentgroup.Changes {
	if ids == nil {
		ids = []int64{}
	}
	return agentgroup.Changes{NameRU: &ru, NameGB: &gb, AgentIDs: &ids}
}

func TestCreateAndGet(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	a := agents(t, conn, 3)
	groups := agentgroup.NewStore(conn)

	id, err := groups.Create(ctx, changes("Продажи", "Sales", a[2], a[0]))
	require.NoError(t, err)
	g, err := groups.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, agentgroup.Names{RU: "Продажи", GB: "Sales"}, g.Names)
	assert.Equal(t, []int64{a[2], a[0]}, g.AgentIDs, "in the order sent")
	assert.WithinDuration(t, time.Now(), g.CreatedAt, time.Minute)
	assert.True(t, g.CreatedAt.Equal(g.UpdatedAt))

	empty, err := groups.Create(ctx, changes("Пусто", "Empty"))
	require.NoError(t, err)
	g, err = groups.Get(ctx, empty)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, g.AgentIDs)

	_, err = groups.Get(ctx, empty+100)
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err))

	// The foreign key holds even if the handler's check was skipped.
	_, err = groups.Create(ctx, changes("x", "x", 987654))
	assert.Equal(t, apperr.Invalid, apperr.KindOf(err))
	n, err := groups.Count(ctx, agentgroup.Filter{})
	require.NoError(t, err)
	assert.Equal(t, 2, n, "a refused create leaves nothing behind")
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	a := agents(t, conn, 3)
	groups := agentgroup.NewStore(conn)
	id, err := groups.Create(ctx, changes("Продажи", "Sales", a[0], a[1]))
	require.NoError(t, err)
	before, err := groups.Get(ctx, id)
	require.NoError(t, err)

	require.NoError(t, groups.Update(ctx, id, agentgroup.Changes{NameGB: s("Sales team")}))
	g, err := groups.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, agentgroup.Names{RU: "Продажи", GB: "Sales team"}, g.Names, "the unsent language is kept")
	assert.Equal(t, []int64{a[0], a[1]}, g.AgentIDs, "unsent agents are kept")
	assert.True(t, g.UpdatedAt.After(before.UpdatedAt))
	assert.True(t, g.CreatedAt.Equal(before.CreatedAt))

	ids := []int64{a[2], a[0]}
	require.NoError(t, groups.Update(ctx, id, agentgroup.Changes{AgentIDs: &ids}))
	g, err = groups.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []int64{a[2], a[0]}, g.AgentIDs, "the set is replaced")
	assert.Equal(t, "Sales team", g.Names.GB)

	none := []int64{}
	require.NoError(t, groups.Update(ctx, id, agentgroup.Changes{AgentIDs: &none}))
	g, err = groups.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, g.AgentIDs)

	last := g.UpdatedAt
	require.NoError(t, groups.Update(ctx, id, agentgroup.Changes{}))
	g, err = groups.Get(ctx, id)
	require.NoError(t, err)
	assert.True(t, g.UpdatedAt.Equal(last), "an empty update changes nothing, not even updatedAt")

	assert.Equal(t, apperr.NotFound, apperr.KindOf(groups.Update(ctx, id+1, agentgroup.Changes{NameRU: s("x")})))
	assert.Equal(t, apperr.NotFound, apperr.KindOf(groups.Update(ctx, id+1, agentgroup.Changes{})))
}

func TestConcurrentPartialUpdatesAllSurvive(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	a := agents(t, conn, 2)
	groups := agentgroup.NewStore(conn)
	id, err := groups.Create(ctx, changes("ru", "gb", a[0]))
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	ids := []int64{a[1]}
	for _, ch := range []agentgroup.Changes{{NameRU: s("Новое")}, {NameGB: s("New")}, {AgentIDs: &ids}} {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- groups.Update(ctx, id, ch) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	g, err := groups.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, agentgroup.Names{RU: "Новое", GB: "New"}, g.Names)
	assert.Equal(t, []int64{a[1]}, g.AgentIDs)
}

func TestListAndCount(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	a := agents(t, conn, 3)
	groups := agentgroup.NewStore(conn)
	var ids []int64
	for i, members := range [][]int64{{a[0], a[1]}, {a[1]}, {}, {a[0]}} {
		id, err := groups.Create(ctx, changes(fmt.Sprintf("Группа %d", i), fmt.Sprintf("Group %d", i), members...))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	tests := map[string]struct {
		f     agentgroup.Filter
		want  []int64
		total int
	}{
		"all":            {agentgroup.Filter{}, ids, 4},
		"agent 0":        {agentgroup.Filter{AgentID: &a[0]}, []int64{ids[0], ids[3]}, 2},
		"agent 1":        {agentgroup.Filter{AgentID: &a[1]}, []int64{ids[0], ids[1]}, 2},
		"agent in none":  {agentgroup.Filter{AgentID: &a[2]}, nil, 0},
		"page":           {agentgroup.Filter{Offset: 1, Limit: 2}, []int64{ids[1], ids[2]}, 4},
		"page of filter": {agentgroup.Filter{AgentID: &a[0], Offset: 1, Limit: 1}, []int64{ids[3]}, 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			list, err := groups.List(ctx, tc.f)
			require.NoError(t, err)
			var got []int64
			for _, g := range list {
				got = append(got, g.ID)
			}
			assert.Equal(t, tc.want, got)
			n, err := groups.Count(ctx, tc.f)
			require.NoError(t, err)
			assert.Equal(t, tc.total, n)
		})
	}
	list, err := groups.List(ctx, agentgroup.Filter{AgentID: &a[1]})
	require.NoError(t, err)
	assert.Equal(t, []int64{a[0], a[1]}, list[0].AgentIDs, "the filter keeps every agent of a group")
}

func TestMissing(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	groups := agentgroup.NewStore(conn)
	id, err := groups.Create(ctx, changes("a", "b"))
	require.NoError(t, err)

	missing, err := groups.Missing(ctx, []int64{id, 9001, -5, 9001, 0, id})
	require.NoError(t, err)
	assert.Equal(t, []int64{9001, -5, 0}, missing, "each unknown id once, in the asked order")
	missing, err = groups.Missing(ctx, []int64{id})
	require.NoError(t, err)
	assert.Equal(t, []int64{}, missing)
	missing, err = groups.Missing(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, missing)
}

func TestEnsure(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	a := agents(t, conn, 3)
	groups := agentgroup.NewStore(conn)
	names := agentgroup.Names{RU: "Продажи", GB: "Sales"}

	// Two loaders at once still make one group.
	var wg sync.WaitGroup
	got := make([]int64, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := groups.Ensure(ctx, names, []int64{a[0], a[1], a[0]})
			assert.NoError(t, err)
			got[i] = id
		}()
	}
	wg.Wait()
	for _, id := range got[1:] {
		assert.Equal(t, got[0], id)
	}

	again, err := groups.Ensure(ctx, names, []int64{a[2]})
	require.NoError(t, err)
	assert.Equal(t, got[0], again)
	g, err := groups.Get(ctx, again)
	require.NoError(t, err)
	assert.Equal(t, []int64{a[2]}, g.AgentIDs, "exactly the given agents")
	n, err := groups.Count(ctx, agentgroup.Filter{})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

func TestSchemaChecks(t *testing.T) {
	// The CHECK constraints hold even for writes that bypass the rules.
	ctx := context.Background()
	conn := openDB(t)
	for name, q := range map[string]string{
		"empty ru":      `INSERT INTO agent_groups (name_ru, name_gb) VALUES ('', 'x')`,
		"empty gb":      `INSERT INTO agent_groups (name_ru, name_gb) VALUES ('x', '')`,
		"unknown group": `INSERT INTO agent_group_members (group_id, user_id, position) VALUES (424242, 1, 1)`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := conn.ExecContext(ctx, q)
			assert.Error(t, err)
		})
	}
}
