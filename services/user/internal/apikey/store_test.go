package apikey_test

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/dbtest"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/user"
	"ccplatform/services/user/internal/usertest"

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
	return usertest.DB(t, testURL)
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

	k, plain, err := keys.Create(ctx, uid, "ci")
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
	assert.Equal(t, apikey.Identity{UserID: uid, AccessGroup: "admin"}, id)

	list, err := keys.List(ctx, []int64{uid})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.NotNil(t, list[0].LastUsedAt, "verification records the use")
	assert.WithinDuration(t, time.Now(), *list[0].LastUsedAt, time.Minute)

	// A second key of the same user is independent of the first.
	_, plain2, err := keys.Create(ctx, uid, "")
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
	_, _, err := apikey.NewStore(openDB(t)).Create(context.Background(), 999999, "x")
	require.Error(t, err)
	assert.Equal(t, apperr.NotFound, apperr.KindOf(err))
}

func TestRevoke(t *testing.T) {
	ctx := context.Background()
	conn := openDB(t)
	keys := apikey.NewStore(conn)
	uid := newUser(t, conn, "revoke@example.com", user.GroupCallCenter)

	t.Run("by id", func(t *testing.T) {
		k, plain, err := keys.Create(ctx, uid, "")
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
		k, plain, err := keys.Create(ctx, uid, "")
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
		a, _, err := keys.Create(ctx, uid, "a")
		require.NoError(t, err)
		_, plainB, err := keys.Create(ctx, uid, "b")
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
	_, plain, err := keys.Create(ctx, uid, "")
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
