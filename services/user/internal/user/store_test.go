package user_test

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/dbtest"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_user", func(url string) int {
		testURL = url
		return m.Run()
	})
}

// openDB gives a test a clean users table in the package's database.
func openDB(t *testing.T) *sqlx.DB {
	t.Helper()
	return servicetest.DB(t, testURL, "users")
}

func str(s string) *string { return &s }

func fullUser() user.User {
	login := time.Date(2026, 11, 20, 9, 15, 0, 0, time.UTC)
	return user.User{
		Name: str("Ольга"), LastName: str("Иванова"), Email: "Olga@Example.com", IsActive: true,
		AccessGroup: user.GroupCallCenterSenior, WebRTCEnabled: true, InterfaceLanguageCode: "ru",
		LanguageSkillsCode: []string{"ru", "gb"}, AutoAnswer: -1, PhoneMode: user.PhonePredictive,
		Avatar: str("https://example.com/a.png"), MessengerNotificationsEnabled: true,
		MessengerChatID: str("12345"), MessengerNotificationsPriority: str("urgent"),
		EmailNotificationsEnabled: true, EmailNotificationsPriority: nil,
		LastLoginAt: &login, LastActivityAt: nil,
	}
}

func TestCreateAndGet(t *testing.T) {
	ctx := context.Background()
	users := user.NewStore(openDB(t))

	in := fullUser()
	id, err := users.Create(ctx, in)
	require.NoError(t, err)
	require.Positive(t, id)

	got, err := users.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, id, got.ID)
	assert.Equal(t, "olga@example.com", got.Email, "stored normalized")
	assert.Equal(t, in.Name, got.Name)
	assert.Equal(t, in.LastName, got.LastName)
	assert.Equal(t, in.AccessGroup, got.AccessGroup)
	assert.True(t, got.WebRTCEnabled)
	assert.Equal(t, []string{"ru", "gb"}, []string(got.LanguageSkillsCode))
	assert.Equal(t, -1, got.AutoAnswer)
	assert.Equal(t, user.PhonePredictive, got.PhoneMode)
	assert.Equal(t, in.Avatar, got.Avatar)
	assert.Equal(t, in.MessengerChatID, got.MessengerChatID)
	assert.Equal(t, in.MessengerNotificationsPriority, got.MessengerNotificationsPriority)
	assert.Nil(t, got.EmailNotificationsPriority)
	require.NotNil(t, got.LastLoginAt)
	assert.True(t, in.LastLoginAt.Equal(*got.LastLoginAt))
	assert.Nil(t, got.LastActivityAt)
	assert.WithinDuration(t, time.Now(), got.CreatedAt, time.Minute)

	byEmail, err := users.GetByEmail(ctx, " OLGA@example.com")
	require.NoError(t, err)
	assert.Equal(t, id, byEmail.ID)

	_, err = users.Get(ctx, id+100)
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err))
	_, err = users.GetByEmail(ctx, "nobody@example.com")
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err))
}

func TestCreateRefuses(t *testing.T) {
	ctx := context.Background()
	users := user.NewStore(openDB(t))
	_, err := users.Create(ctx, fullUser())
	require.NoError(t, err)

	dup := fullUser()
	dup.Email = "OLGA@example.com"
	_, err = users.Create(ctx, dup)
	assert.Equal(t, apperr.Conflict, apperr.KindOf(err), "e-mail unique whatever the case")

	bad := fullUser()
	bad.Email = "other@example.com"
	bad.AutoAnswer = 11
	_, err = users.Create(ctx, bad)
	assert.Equal(t, apperr.Invalid, apperr.KindOf(err))
}

func TestSchemaChecks(t *testing.T) {
	// The CHECK constraints hold even for writes that bypass the rules (another tool, a manual fix).
	ctx := context.Background()
	conn := openDB(t)
	for name, q := range map[string]string{
		"access group":   `INSERT INTO users (email, access_group) VALUES ('a@x.io', 'root')`,
		"auto answer":    `INSERT INTO users (email, auto_answer) VALUES ('a@x.io', 11)`,
		"language":       `INSERT INTO users (email, interface_language_code) VALUES ('a@x.io', 'en')`,
		"skills":         `INSERT INTO users (email, language_skills_code) VALUES ('a@x.io', '{ru,de}')`,
		"phone mode":     `INSERT INTO users (email, phone_mode) VALUES ('a@x.io', 'manual')`,
		"priority":       `INSERT INTO users (email, email_notifications_priority) VALUES ('a@x.io', 'low')`,
		"upper e-mail":   `INSERT INTO users (email) VALUES ('A@x.io')`,
		"empty e-mail":   `INSERT INTO users (email) VALUES ('')`,
		"unknown key fk": `INSERT INTO api_keys (user_id, prefix, hash) VALUES (424242, 'p', 'h')`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := conn.ExecContext(ctx, q)
			assert.Error(t, err)
		})
	}
}

func TestMissingAndGetMany(t *testing.T) {
	ctx := context.Background()
	users := user.NewStore(openDB(t))
	var ids []int64
	for _, e := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		u := fullUser()
		u.Email = e
		id, err := users.Create(ctx, u)
		require.NoError(t, err)
		ids = append(ids, id)
	}

	missing, err := users.Missing(ctx, []int64{ids[2], 9001, ids[0], -5, 9001, 0})
	require.NoError(t, err)
	assert.Equal(t, []int64{9001, -5, 0}, missing, "each unknown id once, in the asked order")

	missing, err = users.Missing(ctx, ids)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, missing)

	missing, err = users.Missing(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, missing)

	many, err := users.GetMany(ctx, []int64{ids[2], ids[0], 9001, ids[0]})
	require.NoError(t, err)
	require.Len(t, many, 2)
	assert.Equal(t, ids[0], many[0].ID)
	assert.Equal(t, ids[2], many[1].ID)

	many, err = users.GetMany(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, many)
}

func TestListAndCount(t *testing.T) {
	ctx := context.Background()
	users := user.NewStore(openDB(t))
	for i, g := range []user.AccessGroup{user.GroupAdmin, user.GroupCallCenter, user.GroupCallCenter, user.GroupNone} {
		u := fullUser()
		u.Email = string(rune('a'+i)) + "@example.com"
		u.AccessGroup = g
		u.IsActive = i != 2
		_, err := users.Create(ctx, u)
		require.NoError(t, err)
	}
	group := user.GroupCallCenter
	active := true
	tests := map[string]struct {
		f         user.Filter
		wantEmail []string
		wantTotal int
	}{
		"all":              {user.Filter{}, []string{"a@example.com", "b@example.com", "c@example.com", "d@example.com"}, 4},
		"group":            {user.Filter{AccessGroup: &group}, []string{"b@example.com", "c@example.com"}, 2},
		"group and active": {user.Filter{AccessGroup: &group, IsActive: &active}, []string{"b@example.com"}, 1},
		"page":             {user.Filter{Offset: 1, Limit: 2}, []string{"b@example.com", "c@example.com"}, 4},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			list, err := users.List(ctx, tc.f)
			require.NoError(t, err)
			var emails []string
			for _, u := range list {
				emails = append(emails, u.Email)
			}
			assert.Equal(t, tc.wantEmail, emails)
			n, err := users.Count(ctx, tc.f)
			require.NoError(t, err)
			assert.Equal(t, tc.wantTotal, n)
		})
	}
}

func TestUpsert(t *testing.T) {
	ctx := context.Background()
	users := user.NewStore(openDB(t))
	u := fullUser()
	id, err := users.Upsert(ctx, u)
	require.NoError(t, err)
	before, err := users.Get(ctx, id)
	require.NoError(t, err)

	u.Email = "olga@EXAMPLE.com"
	u.AutoAnswer = 7
	u.LastName = nil
	again, err := users.Upsert(ctx, u)
	require.NoError(t, err)
	assert.Equal(t, id, again, "same e-mail, same user")

	after, err := users.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 7, after.AutoAnswer)
	assert.Nil(t, after.LastName)
	assert.True(t, before.CreatedAt.Equal(after.CreatedAt))
	n, err := users.Count(ctx, user.Filter{})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

func TestSetActive(t *testing.T) {
	ctx := context.Background()
	users := user.NewStore(openDB(t))
	id, err := users.Create(ctx, fullUser())
	require.NoError(t, err)

	require.NoError(t, users.SetActive(ctx, id, false))
	u, err := users.Get(ctx, id)
	require.NoError(t, err)
	assert.False(t, u.IsActive)
	require.NoError(t, users.SetActive(ctx, id, true))
	u, err = users.Get(ctx, id)
	require.NoError(t, err)
	assert.True(t, u.IsActive)

	assert.Equal(t, apperr.NotFound, apperr.KindOf(users.SetActive(ctx, id+1, false)))
}
