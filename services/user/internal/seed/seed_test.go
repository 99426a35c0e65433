package seed_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/services/user/internal/seed"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_seed", func(url string) int {
		testURL = url
		return m.Run()
	})
}

func openStore(t *testing.T) *user.Store {
	t.Helper()
	return user.NewStore(servicetest.DB(t, testURL))
}

func TestDemoUsersCoverEveryCase(t *testing.T) {
	demo := seed.DemoUsers(time.Now())
	groups := map[user.AccessGroup]int{}
	var inactive, neverLoggedIn, loggedIn, withChat, noLastName int
	modes := map[user.PhoneMode]bool{}
	answers := map[int]bool{}
	for _, u := range demo {
		_, err := user.Prepare(u)
		require.NoError(t, err, u.Email)
		groups[u.AccessGroup]++
		modes[u.PhoneMode] = true
		answers[u.AutoAnswer] = true
		if !u.IsActive {
			inactive++
		}
		if u.LastLoginAt == nil {
			neverLoggedIn++
		} else {
			loggedIn++
		}
		if u.MessengerChatID != nil {
			withChat++
		}
		if u.LastName == nil {
			noLastName++
		}
	}
	for _, g := range append(user.AccessGroups(), user.GroupNone) {
		assert.Positive(t, groups[g], "group %q has a demo user", g)
	}
	assert.Equal(t, 1, inactive)
	assert.Positive(t, neverLoggedIn)
	assert.Positive(t, loggedIn)
	assert.Positive(t, withChat)
	assert.Positive(t, noLastName)
	assert.Len(t, modes, 4, "every phone mode")
	assert.True(t, answers[-1] && answers[0] && len(answers) > 2, "instant, off and delayed auto-answer")
}

func TestUsersStepIsIdempotent(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	step := seed.Users(store, time.Now)

	var out bytes.Buffer
	require.NoError(t, seed.Run(ctx, &out, step))
	first, err := store.List(ctx, user.Filter{})
	require.NoError(t, err)
	require.Len(t, first, len(seed.DemoUsers(time.Now())))

	require.NoError(t, seed.Run(ctx, &out, step))
	second, err := store.List(ctx, user.Filter{})
	require.NoError(t, err)
	require.Len(t, second, len(first), "running twice adds no users")
	for i := range first {
		assert.Equal(t, first[i].ID, second[i].ID)
		assert.Equal(t, first[i].Email, second[i].Email)
	}

	admin, err := store.GetByEmail(ctx, seed.AdminEmail)
	require.NoError(t, err)
	assert.Equal(t, user.GroupAdmin, admin.AccessGroup)
	assert.True(t, admin.IsActive)
	assert.Contains(t, out.String(), "seed users: 9 demo users upserted")
}

func TestSkippedStep(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, seed.Run(context.Background(), &out, seed.Skipped("order custom fields", "ORDER_URL is empty")))
	assert.Equal(t, "seed order custom fields: skipped: ORDER_URL is empty\n", out.String())
}

func TestRunStopsAtFirstFailure(t *testing.T) {
	ran := false
	failing := seed.Step{Name: "broken", Run: func(context.Context) (string, error) { return "", assert.AnError }}
	later := seed.Step{Name: "later", Run: func(context.Context) (string, error) { ran = true; return "", nil }}
	err := seed.Run(context.Background(), &bytes.Buffer{}, failing, later)
	require.ErrorIs(t, err, assert.AnError)
	assert.Contains(t, err.Error(), "seed broken")
	assert.False(t, ran)
}

func TestDemoOrderCustomFieldsCoverEveryType(t *testing.T) {
	types := map[string]bool{}
	codes := map[string]bool{}
	for _, f := range seed.DemoOrderCustomFields() {
		types[f.Type] = true
		assert.False(t, codes[f.Code], "code %s repeated", f.Code)
		codes[f.Code] = true
		if f.Type == "select" || f.Type == "multiselect" {
			assert.NotEmpty(t, f.Options, f.Code)
		} else {
			assert.Empty(t, f.Options, f.Code)
		}
	}
	for _, typ := range []string{"string", "integer", "number", "boolean", "date", "select", "multiselect"} {
		assert.True(t, types[typ], "type %s", typ)
	}
}
