package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/ops"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/migrations"
	"ccplatform/services/user/internal/server"
	"ccplatform/services/user/internal/user"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

const token = "test-internal-token"

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_server", func(url string) int {
		testURL = url
		return m.Run()
	})
}

type fixture struct {
	h    http.Handler
	db   *sqlx.DB
	keys *apikey.Store
	user *user.Store
}

func setup(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	conn, err := migrations.Schema.Open(ctx, testURL, 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	probes := ops.New("user")
	probes.Database(conn.DB)
	return fixture{
		h:    server.New(server.Deps{API: ops.API{Ops: probes, Log: zap.NewNop(), InternalToken: token}, DB: conn, Idempotency: idempotency.New(conn, zap.NewNop())}),
		db:   conn,
		keys: apikey.NewStore(conn),
		user: user.NewStore(conn),
	}
}

type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (f fixture) do(t *testing.T, method, path, body string, headers map[string]string) (int, envelope) {
	t.Helper()
	var req *http.Request
	if body == "" {
		req = httptest.NewRequest(method, path, nil)
	} else {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var env envelope
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env), rec.Body.String())
	assert.NotEmpty(t, rec.Header().Get("X-Request-Id"))
	return rec.Code, env
}

func authed() map[string]string { return map[string]string{"X-Internal-Token": token} }

func (f fixture) newUser(t *testing.T, email string, group user.AccessGroup) int64 {
	t.Helper()
	id, err := f.user.Create(context.Background(), user.User{
		Email: email, IsActive: true, AccessGroup: group, InterfaceLanguageCode: "gb", PhoneMode: user.PhoneDefault,
	})
	require.NoError(t, err)
	return id
}

func TestHealth(t *testing.T) {
	f := setup(t)
	for _, path := range []string{"/readyz", "/readyz/"} {
		code, env := f.do(t, http.MethodGet, path, "", nil)
		assert.Equal(t, http.StatusOK, code, path)
		assert.True(t, env.Success)
		assert.JSONEq(t, `{"status":"ready","checks":{"database":"ok"}}`, string(env.Data))
	}
}

func TestInternalTokenRequired(t *testing.T) {
	f := setup(t)
	for _, path := range []string{"/internal/auth/verify", "/internal/users/check"} {
		for name, headers := range map[string]map[string]string{
			"missing": nil,
			"wrong":   {"X-Internal-Token": "guess"},
		} {
			t.Run(path+" "+name, func(t *testing.T) {
				code, env := f.do(t, http.MethodPost, path, `{}`, headers)
				assert.Equal(t, http.StatusUnauthorized, code)
				assert.False(t, env.Success)
				assert.Equal(t, "X-Internal-Token: missing or wrong", env.Message)
				assert.JSONEq(t, `[]`, string(env.Data))
			})
		}
	}
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	uid := f.newUser(t, "verify@example.com", user.GroupModerator)
	_, good, err := f.keys.Create(ctx, uid, apikey.New{Name: ""})
	require.NoError(t, err)

	t.Run("ok", func(t *testing.T) {
		for _, path := range []string{"/internal/auth/verify", "/internal/auth/verify/"} {
			code, env := f.do(t, http.MethodPost, path, `{"key":"`+good+`"}`, authed())
			require.Equal(t, http.StatusOK, code, path)
			assert.True(t, env.Success)
			assert.Equal(t, "", env.Message)
			var got struct {
				UserID      int64  `json:"userId"`
				AccessGroup string `json:"accessGroup"`
			}
			require.NoError(t, json.Unmarshal(env.Data, &got))
			assert.Equal(t, uid, got.UserID)
			assert.Equal(t, "moderator", got.AccessGroup)
		}
	})

	unknown, err := apikey.Generate()
	require.NoError(t, err)
	revokedKey, revoked, err := f.keys.Create(ctx, uid, apikey.New{Name: ""})
	require.NoError(t, err)
	require.NoError(t, f.keys.Revoke(ctx, revokedKey.ID))
	inactiveID := f.newUser(t, "inactive@example.com", user.GroupCallCenter)
	_, inactive, err := f.keys.Create(ctx, inactiveID, apikey.New{Name: ""})
	require.NoError(t, err)
	require.NoError(t, f.user.SetActive(ctx, inactiveID, false))

	for name, key := range map[string]string{
		"unknown": unknown, "revoked": revoked, "inactive user": inactive, "empty": "", "garbage": "hello",
	} {
		t.Run(name, func(t *testing.T) {
			code, env := f.do(t, http.MethodPost, "/internal/auth/verify", `{"key":"`+key+`"}`, authed())
			assert.Equal(t, http.StatusUnauthorized, code)
			assert.False(t, env.Success)
			assert.Equal(t, "X-Api-Key: unknown or revoked key", env.Message)
			assert.JSONEq(t, `[]`, string(env.Data))
		})
	}

	t.Run("malformed body", func(t *testing.T) {
		code, env := f.do(t, http.MethodPost, "/internal/auth/verify", `{"key":`, authed())
		assert.Equal(t, http.StatusBadRequest, code)
		assert.False(t, env.Success)
	})
	t.Run("key of wrong type", func(t *testing.T) {
		code, env := f.do(t, http.MethodPost, "/internal/auth/verify", `{"key":5}`, authed())
		assert.Equal(t, http.StatusBadRequest, code)
		assert.Contains(t, env.Message, "key")
	})
}

func TestUsersCheck(t *testing.T) {
	f := setup(t)
	a := f.newUser(t, "check-a@example.com", user.GroupCallCenter)
	b := f.newUser(t, "check-b@example.com", user.GroupNone)

	tests := map[string]struct {
		body    string
		missing []int64
	}{
		"all exist":   {`{"ids":[` + itoa(a) + `,` + itoa(b) + `]}`, []int64{}},
		"some absent": {`{"ids":[` + itoa(a) + `,987654,` + itoa(b) + `,0,987654]}`, []int64{987654, 0}},
		"empty":       {`{"ids":[]}`, []int64{}},
		"no ids":      {`{}`, []int64{}},
		"extra field": {`{"ids":[987655],"other":true}`, []int64{987655}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, env := f.do(t, http.MethodPost, "/internal/users/check/", tc.body, authed())
			require.Equal(t, http.StatusOK, code)
			assert.True(t, env.Success)
			var got struct {
				Missing []int64 `json:"missing"`
			}
			require.NoError(t, json.Unmarshal(env.Data, &got))
			assert.Equal(t, tc.missing, got.Missing)
			assert.NotContains(t, string(env.Data), "null", "missing is [] when nothing is missing")
		})
	}

	t.Run("ids not integers", func(t *testing.T) {
		code, env := f.do(t, http.MethodPost, "/internal/users/check", `{"ids":["x"]}`, authed())
		assert.Equal(t, http.StatusBadRequest, code)
		assert.False(t, env.Success)
	})
	t.Run("wrong method", func(t *testing.T) {
		code, _ := f.do(t, http.MethodGet, "/internal/users/check", "", authed())
		assert.GreaterOrEqual(t, code, 400)
		assert.Less(t, code, 500)
	})
	t.Run("unknown route", func(t *testing.T) {
		code, env := f.do(t, http.MethodGet, "/internal/nothing", "", authed())
		assert.Equal(t, http.StatusNotFound, code)
		assert.False(t, env.Success)
	})
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestHealthDatabaseDown(t *testing.T) {
	f := setup(t)
	require.NoError(t, f.db.Close())
	code, env := f.do(t, http.MethodGet, "/readyz", "", nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.False(t, env.Success)
	assert.Equal(t, "not ready: database: unreachable: sql: database is closed", env.Message)
}

// A key is shown once: the create replayed for its Idempotency-Key answers the key's id and other
// fields and says the key cannot be shown again; the key is not in the idempotency table either.
func TestAReplayedKeyCreateNeverShowsTheKeyAgain(t *testing.T) {
	f := setup(t)
	owner := f.newUser(t, "replay@keys.test", user.GroupClient)
	headers := map[string]string{"X-Internal-Token": token, "Idempotency-Key": "key-1", "X-User-Id": strconv.FormatInt(owner, 10),
		"X-Access-Group": "client"}
	body := `{"name":"crm","scopes":["leads:read"]}`
	code, first := f.do(t, http.MethodPost, "/v2/api-key/create", body, headers)
	require.Equal(t, http.StatusOK, code, first.Message)
	var created struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	require.NoError(t, json.Unmarshal(first.Data, &created))
	require.NotEmpty(t, created.Key)

	var stored string
	require.NoError(t, f.db.Get(&stored, `SELECT convert_from(response, 'UTF8') FROM idempotency_keys WHERE key = 'key-1'`))
	assert.NotContains(t, stored, created.Key, "the key is not stored")

	code, again := f.do(t, http.MethodPost, "/v2/api-key/create", body, headers)
	require.Equal(t, http.StatusOK, code, again.Message)
	assert.NotContains(t, string(again.Data), created.Key)
	assert.Equal(t, apikey.ReplayMessage, again.Message)
	var replayed map[string]any
	require.NoError(t, json.Unmarshal(again.Data, &replayed))
	assert.NotContains(t, replayed, "key")
	assert.EqualValues(t, created.ID, replayed["id"])
	assert.Equal(t, "crm", replayed["name"])
	assert.Equal(t, []any{"leads:read"}, replayed["scopes"])
	keys, err := f.keys.List(context.Background(), []int64{owner})
	require.NoError(t, err)
	assert.Len(t, keys, 1, "made once")
}

// Each key has its own rate limit: a user makes at most apikey.DefaultMaxActive active keys
// through the API, and a revoked (or expired) key frees its place.
func TestActiveKeysPerUserAreCapped(t *testing.T) {
	f := setup(t)
	owner := f.newUser(t, "cap@keys.test", user.GroupClient)
	headers := map[string]string{"X-Internal-Token": token, "X-User-Id": strconv.FormatInt(owner, 10), "X-Access-Group": "client"}
	_, _, err := f.keys.Create(context.Background(), owner, apikey.New{Name: "expired"})
	require.NoError(t, err)
	_, err = f.db.Exec(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE user_id = $1`, owner)
	require.NoError(t, err)
	var last struct {
		ID int64 `json:"id"`
	}
	for i := range apikey.DefaultMaxActive {
		code, env := f.do(t, http.MethodPost, "/v2/api-key/create", `{"name":"k`+strconv.Itoa(i)+`"}`, headers)
		require.Equal(t, http.StatusOK, code, env.Message)
		require.NoError(t, json.Unmarshal(env.Data, &last))
	}
	code, env := f.do(t, http.MethodPost, "/v2/api-key/create", `{"name":"one too many"}`, headers)
	assert.Equal(t, http.StatusConflict, code)
	assert.False(t, env.Success)
	assert.Contains(t, env.Message, "at most 10 active API keys")
	keys, err := f.keys.List(context.Background(), []int64{owner})
	require.NoError(t, err)
	assert.Len(t, keys, apikey.DefaultMaxActive+1, "nothing made")

	code, env = f.do(t, http.MethodPost, "/v2/api-key/revoke/"+strconv.FormatInt(last.ID, 10), `{}`, headers)
	require.Equal(t, http.StatusOK, code, env.Message)
	code, env = f.do(t, http.MethodPost, "/v2/api-key/create", `{"name":"in its place"}`, headers)
	assert.Equal(t, http.StatusOK, code, env.Message)
}

func TestAPIKeyExpiryOutsideTheStoredYearsIsRefused(t *testing.T) {
	f := setup(t)
	uid := f.newUser(t, "far-future-key@example.com", user.GroupAdmin)
	headers := authed()
	headers[identity.HeaderUserID] = strconv.FormatInt(uid, 10)
	headers[identity.HeaderAccessGroup] = "admin"
	code, env := f.do(t, http.MethodPost, "/v2/api-key/create", `{"name":"far","expiresAt":"9999-12-31T23:59:59-14:00"}`, headers)
	require.Equal(t, http.StatusBadRequest, code, env.Message)
	assert.Contains(t, env.Message, "expiresAt: "+apitime.RangeRule)
	var n int
	require.NoError(t, f.db.Get(&n, `SELECT count(*) FROM api_keys WHERE user_id = $1`, uid))
	assert.Zero(t, n, "nothing created")
}
