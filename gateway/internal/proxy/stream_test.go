package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"ccplatform/gateway/internal/auth"

	"ccplatform/pkg/requestid"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// newServerGateway is newGateway with the server's read timeout and a body limit, as the
// gateway's own server and its route middleware set them.
func newServerGateway(t *testing.T, readTimeout time.Duration, bodyLimit int64, t0 Target) *gateway {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	p := New(Config{InternalToken: testToken, UpstreamTimeout: 2 * time.Second}, zap.NewNop())
	e := gin.New()
	e.Use(func(c *gin.Context) {
		c.Header(requestid.Header, "gw-rid")
		ctx := auth.WithIdentity(requestid.With(c.Request.Context(), "gw-rid"), auth.Identity{UserID: 7, AccessGroup: "client"})
		c.Request = c.Request.WithContext(ctx)
		if bodyLimit > 0 {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, bodyLimit)
		}
	})
	e.Any("/*path", p.Handler(t0))
	srv := httptest.NewUnstartedServer(e)
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	g := &gateway{Server: srv, proxy: p}
	t.Cleanup(g.Close)
	t.Cleanup(p.CloseIdleConnections)
	return g
}

// A body of unknown length reaches the upstream read by read, chunked, and its trailers after it.
func TestChunkedBodyStreamsAsItArrives(t *testing.T) {
	got := make(chan string, 2)
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64)
		n, _ := io.ReadAtLeast(r.Body, buf, len("first part;"))
		got <- string(buf[:n])
		rest, _ := io.ReadAll(r.Body)
		got <- string(rest)
		w.Header().Set("X-Transfer-Encoding", strings.Join(r.TransferEncoding, ","))
		w.Header().Set("X-Trailer", r.Trailer.Get("X-Checksum"))
		w.Header().Set("X-Length", strconv.FormatInt(r.ContentLength, 10))
		w.WriteHeader(http.StatusAccepted)
	})
	tg := target(t, up.URL)
	tg.Upload = true
	gw := newGateway(t, time.Second, tg)

	pr, pw := io.Pipe()
	req := newRequest(t, http.MethodPost, gw.URL+"/v2/lead/import", pr, nil)
	req.Trailer = http.Header{"X-Checksum": nil}
	done := make(chan *http.Response, 1)
	go func() {
		res, err := gw.Client().Do(req)
		if assert.NoError(t, err) {
			done <- res
		}
		close(done)
	}()
	_, err := io.WriteString(pw, "first part;")
	require.NoError(t, err)
	select {
	case first := <-got:
		assert.Equal(t, "first part;", first, "the upstream had the first part before the client sent the rest")
	case <-time.After(5 * time.Second):
		t.Fatal("the first part was held back")
	}
	req.Trailer.Set("X-Checksum", "abc")
	_, err = io.WriteString(pw, "second part")
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	assert.Equal(t, "second part", <-got)
	res := <-done
	require.NotNil(t, res)
	defer res.Body.Close()
	assert.Equal(t, http.StatusAccepted, res.StatusCode)
	assert.Equal(t, "chunked", res.Header.Get("X-Transfer-Encoding"))
	assert.Equal(t, "-1", res.Header.Get("X-Length"))
	assert.Equal(t, "abc", res.Header.Get("X-Trailer"), "the request's trailer follows its body")
	assert.Empty(t, res.Header.Values("Connection"), "the whole body was read: the connection stays")
}

// A body over what the forwarder holds streams with its length, whole, and the connection is
// reused after it.
func TestBodyOverTheBufferStreamsWithItsLength(t *testing.T) {
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Length", strconv.FormatInt(r.ContentLength, 10))
		w.Header().Set("X-Read", strconv.FormatInt(n, 10))
		_, _ = io.WriteString(w, hex.EncodeToString(h.Sum(nil)))
	})
	gw := newGateway(t, time.Second, target(t, up.URL))
	body := bytes.Repeat([]byte("0123456789abcdef"), (maxBufferedBody+1<<20)/16)
	sum := sha256.Sum256(body)
	for range 2 {
		res, b := send(t, gw.Client(), newRequest(t, http.MethodPost, gw.URL+"/x", bytes.NewReader(body), nil))
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, strconv.Itoa(len(body)), res.Header.Get("X-Length"))
		assert.Equal(t, strconv.Itoa(len(body)), res.Header.Get("X-Read"))
		assert.Equal(t, hex.EncodeToString(sum[:]), string(b))
	}
	assert.Equal(t, int32(1), up.conns.Load(), "one connection for both")
}

// An upstream that answers before the body's end (a refusal, or its own stall bound) is answered
// at once, and the client connection closes after it rather than wait for the rest.
func TestEarlyAnswerGoesOutAtOnceAndCloses(t *testing.T) {
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 5)
		_, _ = io.ReadFull(r.Body, buf)
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"success":false,"message":"slow down","data":[]}`)
	})
	tg := target(t, up.URL)
	tg.Upload = true
	gw := newGateway(t, time.Second, tg)

	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = io.WriteString(pw, "12345") }()
	start := time.Now()
	res, body := send(t, gw.Client(), newRequest(t, http.MethodPost, gw.URL+"/v2/lead/import", pr, http.Header{"Content-Type": {"text/csv"}}))
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.JSONEq(t, `{"success":false,"message":"slow down","data":[]}`, string(body))
	assert.True(t, res.Close, "the connection closes after an answer given before the body's end")
	assert.Equal(t, []string{"gw-rid"}, res.Header.Values("X-Request-Id"))
	assert.Less(t, time.Since(start), 3*time.Second, "answered without waiting for the rest of the body")
}

// A client too slow to send its body is answered 408 and its connection closed; the upstream gets
// no partial body as a whole one.
func TestStalledBodyIs408(t *testing.T) {
	sawWhole := make(chan bool, 1)
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		sawWhole <- err == nil
		w.WriteHeader(http.StatusAccepted)
	})
	tg := target(t, up.URL)
	tg.Upload = true
	gw := newServerGateway(t, 300*time.Millisecond, 0, tg)

	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = io.WriteString(pw, "only the start") }()
	res, body := send(t, gw.Client(), newRequest(t, http.MethodPost, gw.URL+"/v2/lead/import", pr, nil))
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	assert.JSONEq(t, `{"success":false,"message":"body: not received in time; send the whole body at once","data":[]}`, string(body))
	assert.True(t, res.Close)
	assert.False(t, <-sawWhole, "the upstream saw the body end short, not complete")
}

// A streamed body over the route's limit is a 413 naming the limit.
func TestStreamedBodyOverTheLimitIs413(t *testing.T) {
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	})
	tg := target(t, up.URL)
	tg.Upload = true
	gw := newServerGateway(t, 0, 1000, tg)
	res, body := send(t, gw.Client(), newRequest(t, http.MethodPost, gw.URL+"/v2/lead/import", io.MultiReader(strings.NewReader(strings.Repeat("x", 2000))), nil))
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	assert.JSONEq(t, `{"success":false,"message":"body: must be at most 1000 bytes","data":[]}`, string(body))
}

// The event-stream route's answer reaches the client write by write, with the gateway's request
// id, whatever its type and length say.
func TestStreamRouteFlushesEveryWrite(t *testing.T) {
	release := make(chan struct{})
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "30")
		_, _ = io.WriteString(w, "data: one\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: two\n\n"+strings.Repeat(" ", 8))
	})
	tg := target(t, up.URL)
	tg.Stream = true
	gw := newGateway(t, time.Second, tg)
	type start struct {
		res   *http.Response
		first string
		err   error
	}
	started := make(chan start, 1)
	go func() {
		res, err := gw.Client().Do(newRequest(t, http.MethodGet, gw.URL+"/v2/notification/stream", nil, nil))
		if err != nil {
			started <- start{err: err}
			return
		}
		buf := make([]byte, len("data: one\n\n"))
		n, err := io.ReadFull(res.Body, buf)
		started <- start{res: res, first: string(buf[:n]), err: err}
	}()
	var st start
	select {
	case st = <-started:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("the headers and first event were held back until the upstream finished")
	}
	require.NoError(t, st.err)
	res := st.res
	defer res.Body.Close()
	assert.Equal(t, []string{"gw-rid"}, res.Header.Values("X-Request-Id"))
	assert.Equal(t, "data: one\n\n", st.first)
	close(release)
	rest, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, "data: two\n\n"+strings.Repeat(" ", 8), string(rest))
}

// deadlineRecorder is a ResponseWriter that records the read deadlines set on its connection.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	mu  sync.Mutex
	set int
}

func (d *deadlineRecorder) SetReadDeadline(time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.set++
	return nil
}

func (d *deadlineRecorder) deadlinesSet() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.set
}

// Once the client's body was read to its end, stopping the sender (an answer that came while the
// last bytes were still on their way upstream) leaves the client connection's read deadline
// alone: cutting it would lose the next request on that keep-alive connection.
func TestStopLeavesAWholeBodysConnectionAlone(t *testing.T) {
	upstream, far := net.Pipe()
	defer far.Close()
	p := New(Config{}, zap.NewNop())
	client := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	s := &bodySender{uc: newUpstreamConn(upstream), body: iotest.DataErrReader(strings.NewReader("whole")), buf: p.copyBufs,
		client: http.NewResponseController(client), done: make(chan struct{})}
	go s.run()
	// The sender has read the whole body (its end with its last bytes, as net/http's server body
	// of known length gives it) and is writing it (net.Pipe: until the far end reads).
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.readDone
	}, 2*time.Second, time.Millisecond)
	stopped := make(chan struct{})
	go func() {
		s.stop()
		close(stopped)
	}()
	time.Sleep(30 * time.Millisecond) // several of stop's rounds
	assert.Zero(t, client.deadlinesSet(), "no read of the client's body left to cut")
	_ = upstream.Close()
	<-stopped

	// While the body is still being read, stop cuts the read.
	pr, pw := io.Pipe()
	defer pw.Close()
	upstream, far2 := net.Pipe()
	defer far2.Close()
	go func() { _, _ = io.Copy(io.Discard, far2) }()
	client = &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	s = &bodySender{uc: newUpstreamConn(upstream), body: pr, buf: p.copyBufs,
		client: http.NewResponseController(client), done: make(chan struct{})}
	go s.run()
	stopped = make(chan struct{})
	go func() {
		s.stop()
		close(stopped)
	}()
	require.Eventually(t, func() bool { return client.deadlinesSet() > 0 }, 2*time.Second, time.Millisecond)
	_ = pr.CloseWithError(os.ErrDeadlineExceeded) // what the cut deadline does to a real body
	<-stopped
}
