package idempotency

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

const schema = "idem"

var (
	conn *sqlx.DB
	// dbURL is the test database, for connections with settings of their own.
	dbURL string
)

func TestMain(m *testing.M) {
	dbtest.Main(m, "pkg_idempotency", func(u string) int {
		dbURL = u
		ctx := context.Background()
		var err error
		conn, err = db.Open(ctx, u, schema, 16)
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		items := fstest.MapFS{"00001_items.sql": &fstest.MapFile{Data: []byte(
			"-- +goose Up\nCREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL, owner text NOT NULL);\n")}}
		if err := db.Migrate(ctx, conn, schema, Migrations(), db.Migrations{Table: "app_version", FS: items}); err != nil {
			panic(err)
		}
		return m.Run()
	})
}

// app is a service with one guarded create route that inserts a row per run.
type app struct {
	store   *Store
	handler http.Handler
	gate    chan struct{} // when set, each run waits for it
	// hook, when set, runs first in every run.
	hook func()
}

func newApp(t *testing.T) *app { return newAppOn(t, conn) }

// newAppOn is newApp with the key store on c.
func newAppOn(t *testing.T, c *sqlx.DB) *app {
	t.Helper()
	_, err := conn.Exec(`TRUNCATE items, idempotency_keys`)
	require.NoError(t, err)
	a := &app{store: New(c, zap.NewNop())}
	e := web.NewEngine(zap.NewNop(), web.DefaultBodyLimit)
	e.POST("/v2/item/create", a.store.Middleware(), web.Handle(func(c *gin.Context) (any, error) {
		if a.hook != nil {
			a.hook()
		}
		var in struct {
			Name string `json:"name"`
		}
		if err := web.DecodeJSON(c, &in); err != nil {
			return nil, err
		}
		switch in.Name {
		case "":
			return nil, apperr.Field("name", "is required")
		case "crash":
			return nil, apperr.Unavailablef("store is down")
		case "panic":
			panic("handler bug")
		case "secret":
			ReplayAs(c, "the secret was shown once and cannot be shown again", map[string]any{"name": in.Name})
			return map[string]any{"name": in.Name, "secret": "s3cr3t"}, nil
		}
		if a.gate != nil {
			<-a.gate
		}
		var id int64
		if err := conn.GetContext(c, &id, `INSERT INTO items (name, owner) VALUES ($1, $2) RETURNING id`,
			in.Name, c.GetHeader(identity.HeaderUserID)); err != nil {
			return nil, err
		}
		return map[string]any{"id": id, "name": in.Name}, nil
	}))
	a.handler = web.TrimTrailingSlash(e)
	return a
}

type call struct {
	key, user, body string
}

func (a *app) post(t *testing.T, c call) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v2/item/create", strings.NewReader(c.body))
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set(Header, c.key)
	}
	if c.user != "" {
		req.Header.Set(identity.HeaderUserID, c.user)
	}
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, req)
	return w
}

func rows(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM items`))
	return n
}

func keys(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM idempotency_keys`))
	return n
}

func message(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var env web.Envelope
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &env))
	return env.Message
}

func TestWithoutKeyEveryRequestRuns(t *testing.T) {
	a := newApp(t)
	for range 2 {
		w := a.post(t, call{body: `{"name":"a"}`})
		require.Equal(t, http.StatusOK, w.Code)
		assert.Empty(t, w.Header().Get(ReplayedHeader))
	}
	assert.Equal(t, 2, rows(t))
	assert.Zero(t, keys(t))
}

func TestSameKeySameBodyReplays(t *testing.T) {
	a := newApp(t)
	c := call{key: "k-1", user: "7", body: `{"name":"a"}`}
	first := a.post(t, c)
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	assert.Empty(t, first.Header().Get(ReplayedHeader))

	second := a.post(t, c)
	assert.Equal(t, http.StatusOK, second.Code)
	assert.Equal(t, "true", second.Header().Get(ReplayedHeader))
	assert.Equal(t, first.Body.Bytes(), second.Body.Bytes(), "replayed byte for byte")
	assert.Equal(t, first.Header().Get("Content-Type"), second.Header().Get("Content-Type"))
	assert.NotEmpty(t, second.Header().Get("X-Request-Id"))
	assert.Equal(t, 1, rows(t), "the handler ran once")

	// Whitespace differences are another body: the key is bound to the exact bytes.
	w := a.post(t, call{key: "k-1", user: "7", body: `{"name": "a"}`})
	assert.Equal(t, http.StatusConflict, w.Code)
}

// An answer that shows a secret once is never stored: a replay answers what the handler gave
// ReplayAs, with its message.
func TestASecretIsNeitherStoredNorReplayed(t *testing.T) {
	a := newApp(t)
	c := call{key: "k-secret", user: "7", body: `{"name":"secret"}`}
	first := a.post(t, c)
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	assert.Contains(t, first.Body.String(), "s3cr3t", "shown once")
	var stored []byte
	require.NoError(t, conn.Get(&stored, `SELECT response FROM idempotency_keys WHERE key = 'k-secret'`))
	assert.NotContains(t, string(stored), "s3cr3t", "not stored")

	second := a.post(t, c)
	assert.Equal(t, http.StatusOK, second.Code)
	assert.Equal(t, "true", second.Header().Get(ReplayedHeader))
	assert.NotContains(t, second.Body.String(), "s3cr3t", "not shown twice")
	assert.JSONEq(t, `{"success":true,"message":"the secret was shown once and cannot be shown again","data":{"name":"secret"}}`,
		second.Body.String())
}

func TestTrailingSlashIsTheSameRoute(t *testing.T) {
	a := newApp(t)
	require.Equal(t, http.StatusOK, a.post(t, call{key: "k-s", body: `{"name":"a"}`}).Code)
	req := httptest.NewRequest(http.MethodPost, "/v2/item/create/", strings.NewReader(`{"name":"a"}`))
	req.Header.Set(Header, "k-s")
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "true", w.Header().Get(ReplayedHeader))
	assert.Equal(t, 1, rows(t))
}

func TestSameKeyOtherBodyConflicts(t *testing.T) {
	a := newApp(t)
	require.Equal(t, http.StatusOK, a.post(t, call{key: "k-2", user: "7", body: `{"name":"a"}`}).Code)
	w := a.post(t, call{key: "k-2", user: "7", body: `{"name":"b"}`})
	assert.Equal(t, http.StatusConflict, w.Code)
	assert.Equal(t, "Idempotency-Key: already used with a different request", message(t, w))
	assert.Equal(t, 1, rows(t))
}

func TestOwnersDoNotCollide(t *testing.T) {
	a := newApp(t)
	for _, user := range []string{"1", "2", ""} {
		w := a.post(t, call{key: "shared", user: user, body: `{"name":"x"}`})
		require.Equal(t, http.StatusOK, w.Code)
		assert.Empty(t, w.Header().Get(ReplayedHeader), "user %q", user)
	}
	assert.Equal(t, 3, rows(t))
	// Another owner's different body does not conflict either.
	w := a.post(t, call{key: "shared", user: "3", body: `{"name":"y"}`})
	assert.Equal(t, http.StatusOK, w.Code)
}

func TestFailedRequestReleasesTheKey(t *testing.T) {
	a := newApp(t)
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"name":""}`, http.StatusBadRequest},
		{`{"name":"crash"}`, http.StatusServiceUnavailable},
		{`{"name":5}`, http.StatusBadRequest},
		{`{"name":"panic"}`, http.StatusInternalServerError},
	} {
		w := a.post(t, call{key: "k-fail", user: "7", body: tc.body})
		require.Equal(t, tc.status, w.Code, tc.body)
		assert.Zero(t, keys(t), "a failure releases the key: %s", tc.body)
		// Retrying with the same key (here with a corrected body) runs.
		w = a.post(t, call{key: "k-fail", user: "7", body: tc.body})
		require.Equal(t, tc.status, w.Code, "the retry ran again, was not refused or replayed: %s", tc.body)
		assert.Empty(t, w.Header().Get(ReplayedHeader))
	}
	w := a.post(t, call{key: "k-fail", user: "7", body: `{"name":"fixed"}`})
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, 1, rows(t))
}

func TestConcurrentRequestsRunOnce(t *testing.T) {
	a := newApp(t)
	a.gate = make(chan struct{})
	const n = 10
	results := make(chan *httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- a.post(t, call{key: "k-race", user: "7", body: `{"name":"r"}`})
		}()
	}
	// Let the losers be refused while the winner is still inside the handler.
	require.Eventually(t, func() bool { return len(results) == n-1 }, 10*time.Second, 10*time.Millisecond)
	close(a.gate)
	wg.Wait()
	close(results)
	var ok, busy int
	for w := range results {
		switch w.Code {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			busy++
			assert.Equal(t, "Idempotency-Key: a request with this key is still being processed", message(t, w))
		default:
			t.Errorf("unexpected %d %s", w.Code, w.Body.String())
		}
	}
	assert.Equal(t, 1, ok)
	assert.Equal(t, n-1, busy)
	assert.Equal(t, 1, rows(t), "exactly one ran")

	// Once finished, the same request replays.
	a.gate = nil
	w := a.post(t, call{key: "k-race", user: "7", body: `{"name":"r"}`})
	assert.Equal(t, "true", w.Header().Get(ReplayedHeader))
	assert.Equal(t, 1, rows(t))
}

func TestExpiredKeyRunsAgain(t *testing.T) {
	a := newApp(t)
	a.store.Retention = 200 * time.Millisecond
	c := call{key: "k-exp", user: "7", body: `{"name":"e"}`}
	require.Equal(t, http.StatusOK, a.post(t, c).Code)
	assert.Equal(t, "true", a.post(t, c).Header().Get(ReplayedHeader))
	time.Sleep(300 * time.Millisecond)
	w := a.post(t, c)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Header().Get(ReplayedHeader))
	assert.Equal(t, 2, rows(t))
	// ... and a different body under an expired key is no conflict.
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, http.StatusOK, a.post(t, call{key: "k-exp", user: "7", body: `{"name":"f"}`}).Code)
}

func TestAbandonedClaimIsTakenOver(t *testing.T) {
	a := newApp(t)
	a.store.Abandoned = 100 * time.Millisecond
	// A process claimed the key and died before answering.
	_, err := conn.Exec(`INSERT INTO idempotency_keys (owner, key, request_hash, created_at) VALUES ('7', 'k-dead', '\x00', now() - interval '1 second')`)
	require.NoError(t, err)
	w := a.post(t, call{key: "k-dead", user: "7", body: `{"name":"d"}`})
	assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, 1, rows(t))
}

func TestKeyTooLong(t *testing.T) {
	a := newApp(t)
	w := a.post(t, call{key: strings.Repeat("k", 256), body: `{"name":"a"}`})
	assert.Equal(t, http.StatusBadRequest, w.Code)
	assert.Zero(t, rows(t))
}

func TestPurge(t *testing.T) {
	a := newApp(t)
	require.Equal(t, http.StatusOK, a.post(t, call{key: "old", body: `{"name":"a"}`}).Code)
	_, err := conn.Exec(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours'`)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, a.post(t, call{key: "new", body: `{"name":"b"}`}).Code)

	n, err := a.store.Purge(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	var left []string
	require.NoError(t, conn.Select(&left, `SELECT key FROM idempotency_keys`))
	assert.Equal(t, []string{"new"}, left)

	// Sub-second retention is honoured, not rounded down to "purge everything".
	a.store.Retention = 10 * time.Minute
	n, err = a.store.Purge(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n)
	a.store.Retention = 500 * time.Millisecond
	n, err = a.store.Purge(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "the key made just now is younger than 500 ms")
	time.Sleep(600 * time.Millisecond)
	n, err = a.store.Purge(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}

func TestBodyOverLimitIsRefusedBeforeClaiming(t *testing.T) {
	_, err := conn.Exec(`TRUNCATE items, idempotency_keys`)
	require.NoError(t, err)
	store := New(conn, zap.NewNop())
	e := web.NewEngine(zap.NewNop(), 16)
	e.POST("/x", store.Middleware(), web.Handle(func(*gin.Context) (any, error) { return nil, nil }))
	req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(`{"name":"`+strings.Repeat("a", 64)+`"}`))
	req.ContentLength = -1 // as a chunked body arrives
	req.Header.Set(Header, "k-big")
	w := httptest.NewRecorder()
	e.ServeHTTP(w, req)
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	assert.Zero(t, keys(t))
}

// TestOutcomeIsRecordedOnceTheKeyTableIsBack makes recording the outcome fail, as it does while the
// database restarts (here: the key table locked and the store's session giving up on locks at
// once), and checks that the key does not stay claimed: a failure is released and a success
// completed as soon as the table is back, so the retry runs again or gets the original answer.
func TestOutcomeIsRecordedOnceTheKeyTableIsBack(t *testing.T) {
	impatient, err := db.Open(context.Background(), dbURL+"&options=-c%20lock_timeout%3D50ms", schema, 4)
	require.NoError(t, err)
	defer impatient.Close()
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"failure", `{"name":"crash"}`, http.StatusServiceUnavailable},
		{"success", `{"name":"kept"}`, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAppOn(t, impatient)
			a.store.Abandoned = time.Minute
			var locker *sqlx.Tx
			a.hook = func() {
				// Taken after the claim, so that only the outcome meets it.
				locker = conn.MustBegin()
				locker.MustExec(`LOCK TABLE idempotency_keys IN ACCESS EXCLUSIVE MODE`)
			}
			w := a.post(t, call{key: "k-later", user: "7", body: tc.body})
			require.Equal(t, tc.status, w.Code, w.Body.String())
			a.hook = nil
			require.NoError(t, locker.Rollback())

			if tc.status != http.StatusOK {
				require.Eventually(t, func() bool { return keys(t) == 0 }, 10*time.Second, 20*time.Millisecond, "the key is released")
				w = a.post(t, call{key: "k-later", user: "7", body: tc.body})
				assert.Equal(t, tc.status, w.Code, "the retry ran again")
				assert.Empty(t, w.Header().Get(ReplayedHeader))
				return
			}
			require.Eventually(t, func() bool {
				var done int
				require.NoError(t, conn.Get(&done, `SELECT count(*) FROM idempotency_keys WHERE key = 'k-later' AND completed_at IS NOT NULL`))
				return done == 1
			}, 10*time.Second, 20*time.Millisecond, "the outcome is recorded")
			w2 := a.post(t, call{key: "k-later", user: "7", body: tc.body})
			assert.Equal(t, http.StatusOK, w2.Code)
			assert.Equal(t, "true", w2.Header().Get(ReplayedHeader))
			assert.JSONEq(t, w.Body.String(), w2.Body.String(), "the original answer")
			assert.Equal(t, 1, rows(t), "run once")
		})
	}
}
