package apikey_test

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/dbtest"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_apikey", func(url string) int {
		testURL = url
		return m.Run()
	})
}

func openDB(t *testing.T) *sqlx.DB {
	t.Helper()
	return servicetest.DB(t, testURL)
}

func newUser(t *testing.T, conn *sqlx.DB, email string, group user.AccessGroup) int64 {
	t.Helper()
	id, err := user.NewStore(conn).Create(context.Background(), user.User{
		Email: email, IsActive: true, AccessGroup: group, InterfaceLanguageCode: "ru", PhoneMode: user.PhoneDefault,
	})
	require.NoError(t, err)
	return id
}

func assertUnauthorized(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))
	assert.Equal(t, "X-Api-Key: unknown or revoked key", err.Error())
}

func TestCreateAndVerify(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	keys := apikey.NewStore(conn)
	uid := newUser(t, conn, "verify@example.com", user.GroupAdmin)

	k, plain, err := keys.Create(ctx, uid, apikey.New{Name: "ci"})
	require.NoError(t, err)
	assert.True(t, apikey.WellFormed(plain))
	assert.Equal(t, uid, k.UserID)
	assert.Equal(t, "ci", k.Name)
	assert.Equal(t, apikey.Prefix(plain), k.Prefix)
	assert.Nil(t, k.RevokedAt)
	assert.Nil(t, k.LastUsedAt)

	var stored struct {
		Hash   string `db:"hash"`
		Prefix string `db:"prefix"`
	}
	require.NoError(t, conn.GetContext(ctx, &stored, `SELECT hash, prefix FROM api_keys WHERE id = $1`, k.ID))
	assert.Equal(t, apikey.Hash(plain), stored.Hash, "only the hash is stored")
	assert.Equal(t, plain[:12], stored.Prefix)

	id, err := keys.Verify(ctx, plain)
	require.NoError(t, err)
	assert.Equal(t, apikey.Identity{UserID: uid, AccessGroup: "admin", KeyID: k.ID, Scopes: []string{}}, id)

	list, err := keys.List(ctx, []int64{uid})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.NotNil(t, list[0].LastUsedAt, "verification records the use")
	assert.WithinDuration(t, time.Now(), *list[0].LastUsedAt, time.Minute)

	// A second key of the same user is independent of the first.
	_, plain2, err := keys.Create(ctx, uid, apikey.New{Name: ""})
	require.NoError(t, err)
	assert.NotEqual(t, plain, plain2)
	_, err = keys.Verify(ctx, plain2)
	require.NoError(t, err)
}

func TestVerifyRefuses(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	keys := apikey.NewStore(conn)

	unknown, err := apikey.Generate()
	require.NoError(t, err)
	for name, key := range map[string]string{"unknown": unknown, "empty": "", "malformed": "not-a-key"} {
		t.Run(name, func(t *testing.T) {
			_, err := keys.Verify(ctx, key)
			assertUnauthorized(t, err)
		})
	}
}

func TestCreateForUnknownUser(t *testing.T) {
	_, _, err := apikey.NewStore(openDB(t)).Create(context.Background(), 999999, apikey.New{Name: "x"})
	require.Error(t, err)
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err))
}

func TestRevoke(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	keys := apikey.NewStore(conn)
	uid := newUser(t, conn, "revoke@example.com", user.GroupCallCenter)

	t.Run("by id", func(t *testing.T) {
		k, plain, err := keys.Create(ctx, uid, apikey.New{Name: ""})
		require.NoError(t, err)
		require.NoError(t, keys.Revoke(ctx, k.ID))
		_, err = keys.Verify(ctx, plain)
		assertUnauthorized(t, err)

		// Revoking again keeps the first revocation time.
		var first time.Time
		require.NoError(t, conn.GetContext(ctx, &first, `SELECT revoked_at FROM api_keys WHERE id = $1`, k.ID))
		require.NoError(t, keys.Revoke(ctx, k.ID))
		var again time.Time
		require.NoError(t, conn.GetContext(ctx, &again, `SELECT revoked_at FROM api_keys WHERE id = $1`, k.ID))
		assert.True(t, first.Equal(again))
	})
	t.Run("by key", func(t *testing.T) {
		k, plain, err := keys.Create(ctx, uid, apikey.New{Name: ""})
		require.NoError(t, err)
		id, err := keys.RevokeKey(ctx, plain)
		require.NoError(t, err)
		assert.Equal(t, k.ID, id)
		_, err = keys.Verify(ctx, plain)
		assertUnauthorized(t, err)
	})
	t.Run("unknown", func(t *testing.T) {
		assert.Equal(t, apperr.NotFound, apperr.KindOf(keys.Revoke(ctx, 999999)))
		other, err := apikey.Generate()
		require.NoError(t, err)
		_, err = keys.RevokeKey(ctx, other)
		assert.Equal(t, apperr.NotFound, apperr.KindOf(err))
	})
	t.Run("other keys keep working", func(t *testing.T) {
		a, _, err := keys.Create(ctx, uid, apikey.New{Name: "a"})
		require.NoError(t, err)
		_, plainB, err := keys.Create(ctx, uid, apikey.New{Name: "b"})
		require.NoError(t, err)
		require.NoError(t, keys.Revoke(ctx, a.ID))
		_, err = keys.Verify(ctx, plainB)
		require.NoError(t, err)
	})
}

func TestDeactivatedUser(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	keys := apikey.NewStore(conn)
	users := user.NewStore(conn)
	uid := newUser(t, conn, "leaver@example.com", user.GroupCallCenter)
	_, plain, err := keys.Create(ctx, uid, apikey.New{Name: ""})
	require.NoError(t, err)

	require.NoError(t, users.SetActive(ctx, uid, false))
	_, err = keys.Verify(ctx, plain)
	assertUnauthorized(t, err)

	require.NoError(t, users.SetActive(ctx, uid, true))
	got, err := keys.Verify(ctx, plain)
	require.NoError(t, err)
	assert.Equal(t, uid, got.UserID)
	assert.Equal(t, "call-center", got.AccessGroup)
}

func TestScopedAndExpiringKeys(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	keys := apikey.NewStore(conn)
	uid := newUser(t, conn, "scoped@example.com", user.GroupClient)

	k, plain, err := keys.Create(ctx, uid, apikey.New{Name: "crm", Scopes: []access.Scope{access.LeadsRead, access.LeadsWrite}})
	require.NoError(t, err)
	assert.Equal(t, []string{"leads:read", "leads:write"}, []string(k.Scopes))
	id, err := keys.Verify(ctx, plain)
	require.NoError(t, err)
	assert.Equal(t, []string{"leads:read", "leads:write"}, id.Scopes)
	assert.Equal(t, k.ID, id.KeyID)
	assert.Nil(t, id.ExpiresAt, "a key without an expiry")

	soon := time.Now().Add(time.Hour)
	_, expiring, err := keys.Create(ctx, uid, apikey.New{ExpiresAt: &soon})
	require.NoError(t, err)
	id, err = keys.Verify(ctx, expiring)
	require.NoError(t, err, "works until it expires")
	require.NotNil(t, id.ExpiresAt, "the gateway trusts the answer no longer than the key")
	assert.WithinDuration(t, soon, *id.ExpiresAt, time.Microsecond, "to the instant, not the second")
	_, err = conn.ExecContext(ctx, `UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE user_id = $1 AND expires_at IS NOT NULL`, uid)
	require.NoError(t, err)
	_, err = keys.Verify(ctx, expiring)
	assertUnauthorized(t, err)

	// Revoking another user's key by id answers as if it did not exist.
	other := newUser(t, conn, "other@example.com", user.GroupClient)
	assert.Equal(t, apperr.NotFound, apperr.KindOf(keys.RevokeOwned(ctx, k.ID, other)))
	require.NoError(t, keys.RevokeOwned(ctx, k.ID, uid))
	_, err = keys.Verify(ctx, plain)
	assertUnauthorized(t, err)
}

func TestParseExpiryAndCheckScopes(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for raw, want := range map[string]time.Time{
		"90d":                  now.AddDate(0, 0, 90),
		"2027-01-31":           time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC),
		"2027-01-31T10:00:00Z": time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC),
	} {
		got, err := apikey.ParseExpiry(raw, now)
		require.NoError(t, err, raw)
		assert.Equal(t, want, *got, raw)
	}
	never, err := apikey.ParseExpiry("", now)
	require.NoError(t, err)
	assert.Nil(t, never)
	for _, bad := range []string{"0d", "-1d", "xd", "2020-01-01", "tomorrow", "2026-11-24T11:00:00Z"} {
		_, err := apikey.ParseExpiry(bad, now)
		assert.Error(t, err, bad)
	}

	scopes, err := apikey.CheckScopes([]string{"leads:read", "calls:read"}, access.CallCenter)
	require.NoError(t, err)
	assert.Equal(t, []access.Scope{access.LeadsRead, access.CallsRead}, scopes)
	_, err = apikey.CheckScopes([]string{"orders:write"}, access.CallCenter)
	assert.ErrorContains(t, err, "beyond the rights of the call-center group: orders:write")
	_, err = apikey.CheckScopes([]string{"anything"}, access.Admin)
	assert.ErrorContains(t, err, "unknown scope")
	many := make([]string, 101)
	for i := range many {
		many[i] = "leads:read"
	}
	_, err = apikey.CheckScopes(many, access.Admin)
	assert.EqualError(t, err, "must have at most 100 elements")
	scopes, err = apikey.CheckScopes(many[:100], access.Admin)
	require.NoError(t, err)
	assert.Equal(t, []access.Scope{access.LeadsRead}, scopes, "repeats dropped")
}
