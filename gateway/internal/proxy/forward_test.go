package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/gateway/internal/auth"

	"ccplatform/pkg/requestid"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

const testToken = "internal-secret"

// seen is what the echo upstream received; it answers it as JSON.
type seen struct {
	Method     string              `json:"method"`
	RequestURI string              `json:"requestUri"`
	Host       string              `json:"host"`
	Header     map[string][]string `json:"header"`
	Body       string              `json:"body"`
	Length     int64               `json:"length"`
}

// countingServer is an httptest server that counts the connections it accepted.
type countingServer struct {
	*httptest.Server
	conns atomic.Int32
}

func newCountingServer(t testing.TB, h http.HandlerFunc) *countingServer {
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func echoHandler(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "upstream-echo")
	_ = json.NewEncoder(w).Encode(seen{Method: r.Method, RequestURI: r.RequestURI, Host: r.Host, Header: r.Header, Body: string(body), Length: r.ContentLength})
}

// gateway stands in for the gateway's handler: the identity and request id its middleware puts
// into the context, then the proxy's handler for t.
type gateway struct {
	*httptest.Server
	proxy *Proxy
}

func newGateway(t testing.TB, timeout time.Duration, t0 Target) *gateway {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	p := New(Config{InternalToken: testToken, UpstreamTimeout: timeout}, zap.NewNop())
	e := gin.New()
	e.Use(func(c *gin.Context) {
		rid := c.GetHeader(requestid.Header)
		if rid == "" {
			rid = "gw-rid"
		}
		c.Header(requestid.Header, rid)
		ctx := requestid.With(c.Request.Context(), rid)
		if c.GetHeader("X-Test-Anonymous") == "" {
			ctx = auth.WithIdentity(ctx, auth.Identity{UserID: 7, AccessGroup: "client"})
		}
		c.Request = c.Request.WithContext(ctx)
	})
	e.Any("/*path", p.Handler(t0))
	g := &gateway{Server: httptest.NewServer(e), proxy: p}
	t.Cleanup(g.Close)
	t.Cleanup(p.CloseIdleConnections)
	return g
}

func target(t testing.TB, raw string) Target {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return Target{Service: "order", Base: u}
}

// send makes one request to the gateway and reads the whole answer.
func send(t *testing.T, c *http.Client, r *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := c.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, b
}

func newRequest(t *testing.T, method, u string, body io.Reader, h http.Header) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	for k, v := range h {
		r.Header[k] = v
	}
	return r
}

func TestForwardedRequestHeaders(t *testing.T) {
	up := newCountingServer(t, echoHandler)
	gw := newGateway(t, time.Second, target(t, up.URL))
	r := newRequest(t, http.MethodPost, gw.URL+"/v2/order/create?a=1&b=%20x", strings.NewReader(`{"title":"x"}`), http.Header{
		"Content-Type":        {"application/json"},
		"X-Api-Key":           {"raw-key"},
		"X-User-Id":           {"999"},
		"X-Access-Group":      {"admin"},
		"X-Internal-Token":    {"guessed"},
		"X-Request-Id":        {"rid-1"},
		"Connection":          {"X-Hop, x-other-hop"},
		"X-Hop":               {"1"},
		"X-Other-Hop":         {"1"},
		"Keep-Alive":          {"timeout=5"},
		"Proxy-Connection":    {"keep-alive"},
		"Proxy-Authorization": {"Basic eA=="},
		"Te":                  {"trailers, deflate"},
		"Upgrade":             {"h2c"},
		"X-Forwarded-For":     {"10.9.9.9"},
		"X-Forwarded-Host":    {"forged"},
		"X-Forwarded-Proto":   {"https"},
		"Forwarded":           {"for=10.9.9.9"},
		"X-Multi":             {"a", "b"},
		"User-Agent":          {"load-generator/1"},
	})
	res, body := send(t, gw.Client(), r)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	var s seen
	require.NoError(t, json.Unmarshal(body, &s))
	h := http.Header(s.Header)

	assert.Equal(t, "/v2/order/create?a=1&b=%20x", s.RequestURI)
	assert.Equal(t, strings.TrimPrefix(up.URL, "http://"), s.Host)
	assert.Equal(t, `{"title":"x"}`, s.Body)
	assert.Equal(t, []string{"13"}, h.Values("Content-Length"))
	assert.Equal(t, []string{"7"}, h.Values("X-User-Id"))
	assert.Equal(t, []string{"client"}, h.Values("X-Access-Group"))
	assert.Equal(t, []string{testToken}, h.Values("X-Internal-Token"))
	assert.Equal(t, []string{"rid-1"}, h.Values("X-Request-Id"))
	assert.Empty(t, h.Values("X-Api-Key"))
	for _, hop := range []string{"Connection", "X-Hop", "X-Other-Hop", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Upgrade", "Forwarded"} {
		assert.Empty(t, h.Values(hop), hop)
	}
	assert.Equal(t, []string{"trailers"}, h.Values("Te"), "the client's TE names trailers: only that is said upstream")
	assert.Equal(t, []string{"127.0.0.1"}, h.Values("X-Forwarded-For"), "the client's own value is replaced")
	assert.Equal(t, []string{strings.TrimPrefix(gw.URL, "http://")}, h.Values("X-Forwarded-Host"))
	assert.Equal(t, []string{"http"}, h.Values("X-Forwarded-Proto"))
	assert.Equal(t, []string{"a", "b"}, h.Values("X-Multi"))
	assert.Equal(t, []string{"load-generator/1"}, h.Values("User-Agent"))
	assert.Equal(t, []string{"application/json"}, h.Values("Content-Type"))
}

func TestForwardedResponseHeaders(t *testing.T) {
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Request-Id", "upstream")
		h.Set("Connection", "X-Secret")
		h.Set("X-Secret", "1")
		h.Set("Keep-Alive", "timeout=5")
		h.Set("Proxy-Authenticate", "Basic")
		h.Set("Upgrade", "h2c")
		h["Set-Cookie"] = []string{"a=1", "b=2"}
		h.Set("X-Kept", "yes")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"success":true}`)
	})
	gw := newGateway(t, time.Second, target(t, up.URL))
	res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
	assert.Equal(t, http.StatusCreated, res.StatusCode)
	assert.Equal(t, `{"success":true}`, string(body))
	assert.Equal(t, int64(len(body)), res.ContentLength, "the upstream's length is kept")
	assert.Equal(t, []string{"gw-rid"}, res.Header.Values("X-Request-Id"), "the gateway's, once")
	for _, hop := range []string{"X-Secret", "Keep-Alive", "Proxy-Authenticate", "Upgrade"} {
		assert.Empty(t, res.Header.Values(hop), hop)
	}
	assert.Equal(t, []string{"a=1", "b=2"}, res.Header.Values("Set-Cookie"))
	assert.Equal(t, "yes", res.Header.Get("X-Kept"))
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
}

func TestChunkedAnswerStreamsAsItComes(t *testing.T) {
	release := make(chan struct{})
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "second\n")
	})
	gw := newGateway(t, time.Second, target(t, up.URL))
	res, err := gw.Client().Do(newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, []string{"chunked"}, res.TransferEncoding)
	assert.Equal(t, int64(-1), res.ContentLength)
	br := bufio.NewReader(res.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "first\n", line, "the first part reached the client before the upstream finished")
	close(release)
	rest, err := io.ReadAll(br)
	require.NoError(t, err)
	assert.Equal(t, "second\n", string(rest))

	// The connection went back to the pool once the chunked body ended.
	_, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
	assert.Equal(t, "first\nsecond\n", string(body))
	assert.Equal(t, int32(1), up.conns.Load())
}

func TestLargeBodiesBothWays(t *testing.T) {
	answer := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Got", strconv.Itoa(len(b)))
		w.Header().Set("X-Got-Ok", strconv.FormatBool(bytes.Equal(b, bytes.Repeat([]byte("x"), 1<<20))))
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = w.Write(answer)
	})
	gw := newGateway(t, time.Second, target(t, up.URL))
	for range 2 {
		res, body := send(t, gw.Client(), newRequest(t, http.MethodPost, gw.URL+"/x", bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20)), nil))
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "1048576", res.Header.Get("X-Got"))
		assert.Equal(t, "true", res.Header.Get("X-Got-Ok"))
		assert.Equal(t, int64(len(answer)), res.ContentLength)
		assert.True(t, bytes.Equal(answer, body), "answer copied whole")
	}
	assert.Equal(t, int32(1), up.conns.Load(), "one connection for both")
}

func TestConnectionsAreReused(t *testing.T) {
	var closeNext atomic.Bool
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if closeNext.Load() {
			w.Header().Set("Connection", "close")
		}
		_, _ = io.WriteString(w, "ok")
	})
	gw := newGateway(t, time.Second, target(t, up.URL))
	for range 20 {
		res, _ := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	assert.Equal(t, int32(1), up.conns.Load())
	assert.Equal(t, 1, gw.proxy.poolFor(up.Listener.Addr().String()).idleCount())

	closeNext.Store(true)
	res, _ := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Zero(t, gw.proxy.poolFor(up.Listener.Addr().String()).idleCount(), "an answer that closes its connection leaves nothing to reuse")
	closeNext.Store(false)
	send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
	assert.Equal(t, int32(2), up.conns.Load())
}

// A pooled connection the upstream closed (or reset) while it was idle (its idle timeout, a
// restart, a crash) must not fail the next request, even one that may not be repeated.
func TestUpstreamClosedIdleConnection(t *testing.T) {
	var mu sync.Mutex
	var idle []net.Conn
	up := httptest.NewUnstartedServer(http.HandlerFunc(echoHandler))
	var conns atomic.Int32
	up.Config.ConnState = func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			conns.Add(1)
		case http.StateIdle:
			mu.Lock()
			idle = append(idle, c)
			mu.Unlock()
		}
	}
	up.Start()
	t.Cleanup(up.Close)
	gw := newGateway(t, time.Second, target(t, up.URL))

	for i := range 3 {
		res, body := send(t, gw.Client(), newRequest(t, http.MethodPost, gw.URL+"/v2/order/create", strings.NewReader(`{"n":1}`), nil))
		require.Equal(t, http.StatusOK, res.StatusCode, "request %d: %s", i, body)
		// Wait until the server counts the connection idle, then close it under the pool.
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(idle) > 0
		}, time.Second, time.Millisecond)
		mu.Lock()
		for _, c := range idle {
			if tc, ok := c.(*net.TCPConn); ok && i%2 == 1 {
				// A reset, as from an upstream that died, instead of an orderly close.
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
		}
		idle = nil
		mu.Unlock()
	}
	assert.Equal(t, int32(3), conns.Load(), "each closed connection was replaced")
}

// rawUpstream answers each connection with script(n, conn), n counting connections from 1.
func rawUpstream(t *testing.T, script func(n int, c net.Conn, br *bufio.Reader)) (addr string, conns *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	conns = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1))
			go func() {
				defer c.Close()
				script(n, c, bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + ln.Addr().String(), conns
}

// readRequest reads one request and its body off a raw connection.
func readRequest(br *bufio.Reader) (*http.Request, error) {
	r, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, r.Body)
	return r, err
}

func answerOK(c net.Conn) {
	_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
}

// A reused connection that dies under a request before any answer arrives: the request is sent
// again on a new connection when the upstream cannot have acted on it, or when it may be repeated.
func TestRetryOnReusedConnection(t *testing.T) {
	cases := []struct {
		name    string
		method  string
		header  http.Header
		status  int
		retried bool
	}{
		{"get", http.MethodGet, nil, http.StatusOK, true},
		{"post with idempotency key", http.MethodPost, http.Header{"Idempotency-Key": {"k"}}, http.StatusOK, true},
		{"post", http.MethodPost, nil, http.StatusBadGateway, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Connection 1 answers one request, then reads the next one and hangs up without a
			// word, as an upstream that closes a keep-alive connection at the wrong moment or
			// dies mid-request does. Later connections answer every request.
			addr, conns := rawUpstream(t, func(n int, c net.Conn, br *bufio.Reader) {
				for i := 0; ; i++ {
					if _, err := readRequest(br); err != nil {
						return
					}
					if n == 1 && i == 1 {
						return
					}
					answerOK(c)
				}
			})
			gw := newGateway(t, time.Second, target(t, addr))
			res, _ := send(t, gw.Client(), newRequest(t, tc.method, gw.URL+"/x", strings.NewReader("{}"), tc.header))
			require.Equal(t, http.StatusOK, res.StatusCode)
			res, body := send(t, gw.Client(), newRequest(t, tc.method, gw.URL+"/x", strings.NewReader("{}"), tc.header))
			assert.Equal(t, tc.status, res.StatusCode, string(body))
			if tc.retried {
				assert.Equal(t, int32(2), conns.Load())
			} else {
				assert.Equal(t, int32(1), conns.Load(), "a request the upstream may have acted on is not sent twice")
				assert.Contains(t, string(body), "order service gave no valid answer")
			}
		})
	}
}

// A fresh connection is never retried: the upstream hanging up on it says something about the
// request.
func TestNoRetryOnFreshConnection(t *testing.T) {
	addr, conns := rawUpstream(t, func(n int, c net.Conn, br *bufio.Reader) {
		_, _ = readRequest(br)
	})
	gw := newGateway(t, time.Second, target(t, addr))
	res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
	assert.Equal(t, http.StatusBadGateway, res.StatusCode)
	assert.JSONEq(t, `{"success":false,"message":"order service gave no valid answer","data":[]}`, string(body))
	assert.Equal(t, int32(1), conns.Load())
}

func TestUpstreamClosesMidAnswer(t *testing.T) {
	t.Run("in the headers", func(t *testing.T) {
		addr, _ := rawUpstream(t, func(n int, c net.Conn, br *bufio.Reader) {
			if _, err := readRequest(br); err == nil {
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Le")
			}
		})
		gw := newGateway(t, time.Second, target(t, addr))
		res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
		assert.Equal(t, http.StatusBadGateway, res.StatusCode)
		assert.JSONEq(t, `{"success":false,"message":"order service gave no valid answer","data":[]}`, string(body))
		assert.Equal(t, []string{"gw-rid"}, res.Header.Values("X-Request-Id"))
	})
	t.Run("in the body", func(t *testing.T) {
		addr, conns := rawUpstream(t, func(n int, c net.Conn, br *bufio.Reader) {
			if _, err := readRequest(br); err == nil {
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
			}
		})
		gw := newGateway(t, time.Second, target(t, addr))
		// The status is already decided; aborting the client connection is the only way left to
		// say the answer is incomplete (before or after the buffered headers went out).
		res, err := gw.Client().Do(newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
		if err == nil {
			_, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		assert.Error(t, err, "the client learns the answer is incomplete")
		assert.Zero(t, gw.proxy.poolFor(strings.TrimPrefix(addr, "http://")).idleCount())
		assert.Equal(t, int32(1), conns.Load())
	})
}

func TestSlowHeadersAre504ButSlowBodiesAreNot(t *testing.T) {
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		wait := 500 * time.Millisecond
		if r.URL.Path == "/slow-body" {
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "late")
	})
	gw := newGateway(t, 150*time.Millisecond, target(t, up.URL))

	start := time.Now()
	res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/slow-headers", nil, nil))
	assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	assert.JSONEq(t, `{"success":false,"message":"order service did not answer in time","data":[]}`, string(body))
	assert.Less(t, time.Since(start), 450*time.Millisecond)

	res, body = send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/slow-body", nil, nil))
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "late", string(body), "the timeout bounds the headers only")
}

func TestDialRefusedIs503(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	gw := newGateway(t, time.Second, target(t, "http://"+addr))
	res, body := send(t, gw.Client(), newRequest(t, http.MethodPost, gw.URL+"/x", strings.NewReader("{}"), nil))
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.JSONEq(t, `{"success":false,"message":"order service is unavailable","data":[]}`, string(body))
	assert.NotContains(t, string(body), addr)
}

// A client that goes away closes the upstream connection, whether the upstream is still working
// on the answer or sending it, and that connection is never reused.
func TestClientCancelClosesUpstreamConnection(t *testing.T) {
	started := make(chan struct{}, 1)
	upstreamSawClose := make(chan struct{}, 1)
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fast" {
			_, _ = io.WriteString(w, "ok")
			return
		}
		if r.URL.Path == "/streaming" {
			_, _ = io.WriteString(w, "part\n")
			http.NewResponseController(w).Flush()
		}
		started <- struct{}{}
		select {
		case <-r.Context().Done():
			upstreamSawClose <- struct{}{}
		case <-time.After(5 * time.Second):
		}
	})
	gw := newGateway(t, 10*time.Second, target(t, up.URL))
	pool := gw.proxy.poolFor(up.Listener.Addr().String())

	for _, path := range []string{"/waiting", "/streaming"} {
		t.Run(path, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				res, err := gw.Client().Do(newRequest(t, http.MethodGet, gw.URL+path, nil, nil).WithContext(ctx))
				if err == nil {
					_, err = io.ReadAll(res.Body)
					res.Body.Close()
				}
				errc <- err
			}()
			<-started
			cancel()
			assert.Error(t, <-errc)
			select {
			case <-upstreamSawClose:
			case <-time.After(2 * time.Second):
				t.Fatal("the upstream connection stayed open after the client went away")
			}
			assert.Zero(t, pool.idleCount(), "nothing went back to the pool")
		})
	}
	before := up.conns.Load()
	res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/fast", nil, nil))
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "ok", string(body))
	assert.Equal(t, before+1, up.conns.Load(), "a new connection, not a cancelled one")
}

// Informational answers before the final one are read past, and a client's Expect: 100-continue
// is served without losing the gateway's own headers.
func TestInformationalAnswers(t *testing.T) {
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		echoHandler(w, r)
	})
	gw := newGateway(t, time.Second, target(t, up.URL))
	res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, nil))
	assert.Equal(t, http.StatusOK, res.StatusCode, string(body))
	assert.Equal(t, []string{"gw-rid"}, res.Header.Values("X-Request-Id"))

	c, err := net.Dial("tcp", gw.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: gw\r\nExpect: 100-continue\r\nX-Request-Id: rid-e\r\nContent-Length: 2\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	cont, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusContinue, cont.StatusCode)
	_, err = io.WriteString(c, "{}")
	require.NoError(t, err)
	final, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, err := io.ReadAll(final.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, final.StatusCode)
	assert.Equal(t, []string{"rid-e"}, final.Header.Values("X-Request-Id"))
	var s seen
	require.NoError(t, json.Unmarshal(b, &s))
	assert.Equal(t, "{}", s.Body)
}

// No route switches protocols, so a client's Upgrade is a hop-by-hop header like any other and
// stays here, and an upstream that switches anyway is no valid answer.
func TestUpgradesAreNotForwarded(t *testing.T) {
	up := newCountingServer(t, echoHandler)
	gw := newGateway(t, time.Second, target(t, up.URL))
	res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}))
	require.Equal(t, http.StatusOK, res.StatusCode)
	var s seen
	require.NoError(t, json.Unmarshal(body, &s))
	assert.Empty(t, http.Header(s.Header).Values("Connection"))
	assert.Empty(t, http.Header(s.Header).Values("Upgrade"))

	addr, _ := rawUpstream(t, func(n int, c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		}
	})
	gw = newGateway(t, time.Second, target(t, addr))
	res, body = send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/x", nil, http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}}))
	assert.Equal(t, http.StatusBadGateway, res.StatusCode)
	assert.JSONEq(t, `{"success":false,"message":"order service gave no valid answer","data":[]}`, string(body))
}

func TestIdlePoolIsBoundedAndExpires(t *testing.T) {
	var dialed atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var accepted []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range accepted {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			mu.Lock()
			accepted = append(accepted, c)
			mu.Unlock()
		}
	}()
	p := newConnPool(ln.Addr().String(), &net.Dialer{Timeout: time.Second}, 2, 50*time.Millisecond)
	ctx := context.Background()
	var got []*upstreamConn
	for range 3 {
		c, err := p.get(ctx)
		require.NoError(t, err)
		got = append(got, c)
	}
	for _, c := range got {
		p.put(c)
	}
	assert.Equal(t, 2, p.idleCount(), "one over the bound was closed")
	c, err := p.get(ctx)
	require.NoError(t, err)
	assert.True(t, c.reused)
	p.put(c)

	time.Sleep(60 * time.Millisecond)
	c, err = p.get(ctx)
	require.NoError(t, err)
	assert.False(t, c.reused, "expired connections are not handed out")
	assert.Eventually(t, func() bool { return dialed.Load() == 4 }, time.Second, time.Millisecond)
	p.put(c)
	assert.Equal(t, 1, p.idleCount(), "expired ones were dropped on the way")
	p.closeIdle()
	assert.Zero(t, p.idleCount())
}

// Many requests at once over a fast upstream: every answer must be noticed as soon as it arrives
// (a missed one would only end at the upstream timeout, as a 504).
func TestConcurrentRequests(t *testing.T) {
	up := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.RawQuery)
	})
	gw := newGateway(t, 5*time.Second, target(t, up.URL))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(client.CloseIdleConnections)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 100 {
				q := fmt.Sprintf("g=%d&i=%d", g, i)
				start := time.Now()
				res, err := client.Get(gw.URL + "/x?" + q)
				if !assert.NoError(t, err) {
					return
				}
				b, err := io.ReadAll(res.Body)
				res.Body.Close()
				assert.NoError(t, err)
				assert.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, q, string(b))
				assert.Less(t, time.Since(start), 2*time.Second)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, up.conns.Load(), int32(32), "connections are reused")
}
