package imports_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/imports"
	"ccplatform/services/lead/internal/servicetest"
	"ccplatform/services/lead/internal/upload"
	"ccplatform/services/lead/internal/wiring"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// uploadServer serves the import routes over a real connection (deadlines need one), storing
// through conn, with limits.
func uploadServer(t *testing.T, conn *sqlx.DB, limits upload.Limits) string {
	t.Helper()
	h := imports.NewHandler(imports.NewStore(conn), asynccreate.NewIDs("test-import-secret"), env.Catalog.ByIDs, upload.NewGate(limits), zap.NewNop())
	api := ops.API{Ops: ops.New("lead-api"), Log: zap.NewNop(), InternalToken: servicetest.Token}
	srv := httptest.NewServer(api.Handler(imports.MaxBody, h.Routes))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// trickle is an upload sent by hand: its headers and the first part of its body, the rest when
// the test says.
type trickle struct {
	conn net.Conn
	rest string
}

// startUpload sends the headers of a CSV import of key and the body up to its first row.
func startUpload(t *testing.T, addr string, key int, orderID int64, code string) *trickle {
	t.Helper()
	body := "phone,leadType\n" + newPhone() + ",straight\n"
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /v2/lead/import?orderId=%d&orderCode=%s HTTP/1.1\r\nHost: lead\r\nContent-Type: text/csv\r\n"+
		"Content-Length: %d\r\n%s: %s\r\n%s: %s\r\n%s: admin\r\n%s: %d\r\n\r\n%s",
		orderID, code, len(body), web.HeaderInternalToken, servicetest.Token, identity.HeaderUserID, servicetest.UserID,
		identity.HeaderAccessGroup, access.HeaderKeyID, key, body[:20])
	require.NoError(t, err)
	return &trickle{conn: conn, rest: body[20:]}
}

// answer reads the upload's answer, waiting at most within.
func (tr *trickle) answer(t *testing.T, within time.Duration) (*http.Response, web.Envelope) {
	t.Helper()
	require.NoError(t, tr.conn.SetReadDeadline(time.Now().Add(within)))
	res, err := http.ReadResponse(bufio.NewReader(tr.conn), nil)
	require.NoError(t, err, "no answer within %s", within)
	defer res.Body.Close()
	var ans web.Envelope
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ans), "%s", b)
	return res, ans
}

// waitSpooled waits until n uploads are being received into dir: past the gate, their file made.
func waitSpooled(t *testing.T, dir string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		files, err := os.ReadDir(dir)
		return err == nil && len(files) == n
	}, 5*time.Second, 10*time.Millisecond, "%d uploads in progress", n)
}

// finish sends the rest of the body and reads the answer.
func (tr *trickle) finish(t *testing.T) (*http.Response, web.Envelope) {
	t.Helper()
	_, err := io.WriteString(tr.conn, tr.rest)
	require.NoError(t, err)
	return tr.answer(t, 10*time.Second)
}

// Uploads that trickle in hold no connection of the pool: the file is received before the import
// touches the database, so the service's other requests are served meanwhile.
func TestSlowUploadsHoldNoDatabaseConnection(t *testing.T) {
	s := env.Settings
	s.MaxConns = 4
	conn, err := wiring.OpenDB(context.Background(), s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	dir := t.TempDir()
	addr := uploadServer(t, conn, upload.Limits{PerKey: 100, Total: 100, Stall: time.Minute, Whole: time.Minute, Dir: dir})
	orderID, code := newOrder()
	var uploads []*trickle
	for key := range 2 * s.MaxConns {
		uploads = append(uploads, startUpload(t, addr, key+1, orderID, code))
	}
	waitSpooled(t, dir, len(uploads))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var one int
	require.NoError(t, conn.GetContext(ctx, &one, `SELECT 1`), "a connection of the pool while %d uploads trickle", len(uploads))
	assert.Zero(t, conn.Stats().InUse)

	for _, u := range uploads {
		res, ans := u.finish(t)
		assert.Equal(t, http.StatusAccepted, res.StatusCode, ans.Message)
	}
}

// A key may have PerKey uploads in progress, all keys Total: past either the upload is answered
// 429 with Retry-After at once, without its body being read; a finished upload frees its place.
func TestUploadsInProgressAreBoundedPerKeyAndInAll(t *testing.T) {
	dir := t.TempDir()
	addr := uploadServer(t, env.DB, upload.Limits{PerKey: 1, Total: 2, Stall: time.Minute, Whole: time.Minute, Dir: dir})
	orderID, code := newOrder()
	first := startUpload(t, addr, 1, orderID, code)
	waitSpooled(t, dir, 1)
	res, ans := startUpload(t, addr, 1, orderID, code).answer(t, 5*time.Second)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "5", res.Header.Get("Retry-After"))
	assert.Equal(t, "uploads: this API key has 1 imports being uploaded already (at most 1 at once); send this one when one of them has been answered", ans.Message)

	second := startUpload(t, addr, 2, orderID, code)
	waitSpooled(t, dir, 2)
	res, ans = startUpload(t, addr, 3, orderID, code).answer(t, 5*time.Second)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "5", res.Header.Get("Retry-After"))
	assert.Equal(t, "uploads: the service is receiving as many imports as it takes at once (2); send this one again in a few seconds", ans.Message)

	for _, u := range []*trickle{first, second} {
		res, ans := u.finish(t)
		assert.Equal(t, http.StatusAccepted, res.StatusCode, ans.Message)
	}
	res, ans = startUpload(t, addr, 1, orderID, code).finish(t)
	assert.Equal(t, http.StatusAccepted, res.StatusCode, ans.Message)
	waitSpooled(t, dir, 0) // every spooled file removed
}

// A body that stops arriving is answered 408 after the longest pause; one that keeps trickling,
// after the whole upload's time. Neither stores anything.
func TestStalledOrEndlessBodiesAre408(t *testing.T) {
	var before int
	require.NoError(t, env.DB.Get(&before, `SELECT count(*) FROM lead_imports`))
	orderID, code := newOrder()

	addr := uploadServer(t, env.DB, upload.Limits{PerKey: 1, Total: 1, Stall: 300 * time.Millisecond, Whole: time.Minute})
	start := time.Now()
	res, ans := startUpload(t, addr, 1, orderID, code).answer(t, 5*time.Second)
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	assert.Equal(t, "body: nothing arrived for 300ms; send the file without pausing", ans.Message)
	assert.Less(t, time.Since(start), 3*time.Second)
	// Its place is free again.
	res, ans = startUpload(t, addr, 1, orderID, code).finish(t)
	assert.Equal(t, http.StatusAccepted, res.StatusCode, ans.Message)

	addr = uploadServer(t, env.DB, upload.Limits{PerKey: 1, Total: 1, Stall: time.Second, Whole: 700 * time.Millisecond})
	tr := startUpload(t, addr, 1, orderID, code)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, b := range []byte(tr.rest) {
			if _, err := tr.conn.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	res, ans = tr.answer(t, 5*time.Second)
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	assert.Equal(t, "body: not received within 700ms; send the file at once, not piece by piece", ans.Message)
	_ = tr.conn.Close()
	<-done

	var after int
	require.NoError(t, env.DB.Get(&after, `SELECT count(*) FROM lead_imports`))
	assert.Equal(t, before+1, after, "only the upload that arrived whole")
}

// Once the whole file is in, storing it may take longer than the longest pause in a body: a
// pause's deadline left on the connection would cancel the request (net/http lifts it at the
// body's end; this holds it to that).
func TestStoringMayOutlastTheStallTimeout(t *testing.T) {
	dir := t.TempDir()
	addr := uploadServer(t, env.DB, upload.Limits{PerKey: 1, Total: 1, Stall: 200 * time.Millisecond, Whole: time.Minute, Dir: dir})
	orderID, code := newOrder()
	// Storing waits for this transaction's lock on lead_imports.
	tx, err := env.DB.Beginx()
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.Exec(`LOCK TABLE lead_imports IN EXCLUSIVE MODE`)
	require.NoError(t, err)

	tr := startUpload(t, addr, 1, orderID, code)
	_, err = io.WriteString(tr.conn, tr.rest)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, env.DB.Get(&waiting, `SELECT count(*) FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO lead_imports%'`))
		return waiting == 1
	}, 5*time.Second, 10*time.Millisecond, "the upload waits for the lock")
	time.Sleep(500 * time.Millisecond) // longer than the stall timeout, while the upload is stored
	require.NoError(t, tx.Rollback())
	res, ans := tr.answer(t, 10*time.Second)
	assert.Equal(t, http.StatusAccepted, res.StatusCode, ans.Message)
}
