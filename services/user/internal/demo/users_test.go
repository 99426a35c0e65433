package demo_test

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/services/user/internal/demo"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_demo", func(url string) int {
		testURL = url
		return m.Run()
	})
}

func openStore(t *testing.T) *user.Store {
	t.Helper()
	return user.NewStore(servicetest.DB(t, testURL, "users", "agent_groups"))
}

func TestDemoUsersCoverEveryCase(t *testing.T) {
	users := demo.Users(time.Now())
	groups := map[user.AccessGroup]int{}
	var inactive, neverLoggedIn, loggedIn, withChat, noLastName int
	modes := map[user.PhoneMode]bool{}
	answers := map[int]bool{}
	for _, u := range users {
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

func TestLoadUsersIsIdempotent(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)

	summary, err := demo.LoadUsers(ctx, store, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "9 demo users upserted (admin: "+demo.AdminEmail+")", summary)
	first, err := store.List(ctx, user.Filter{})
	require.NoError(t, err)
	require.Len(t, first, len(demo.Users(time.Now())))

	_, err = demo.LoadUsers(ctx, store, time.Now())
	require.NoError(t, err)
	second, err := store.List(ctx, user.Filter{})
	require.NoError(t, err)
	require.Len(t, second, len(first), "running twice adds no users")
	for i := range first {
		assert.Equal(t, first[i].ID, second[i].ID)
		assert.Equal(t, first[i].Email, second[i].Email)
	}

	admin, err := store.GetByEmail(ctx, demo.AdminEmail)
	require.NoError(t, err)
	assert.Equal(t, user.GroupAdmin, admin.AccessGroup)
	assert.True(t, admin.IsActive)
}
