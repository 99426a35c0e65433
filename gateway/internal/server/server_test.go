package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/gateway/api"
	"ccplatform/gateway/internal/auth"
	"ccplatform/gateway/internal/proxy"
	"ccplatform/gateway/internal/ratelimit"
	"ccplatform/gateway/internal/route"

	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

const (
	goodKey  = "good-key"
	token    = "internal-secret"
	verifyAt = "/internal/auth/verify"
)

// echo is what a stand-in upstream saw; it answers it back as its data.
type echo struct {
	Service string              `json:"service"`
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	Query   string              `json:"query"`
	Body    string              `json:"body"`
	Header  map[string][]string `json:"header"`
}

type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// testKeys are the keys the stand-in user service knows, with the identity it answers.
var testKeys = map[string]string{
	goodKey:        `{"userId":7,"accessGroup":"admin","keyId":70,"scopes":[]}`,
	"client-key":   `{"userId":8,"accessGroup":"client","keyId":80,"scopes":[]}`,
	"agent-key":    `{"userId":9,"accessGroup":"call-center","keyId":90,"scopes":[]}`,
	"nogroup-key":  `{"userId":10,"accessGroup":"","keyId":100,"scopes":[]}`,
	"readonly-key": `{"userId":8,"accessGroup":"client","keyId":81,"scopes":["leads:read","orders:read"]}`,
}

// upstream stands in for any HTTP service behind the gateway; the user one also answers the
// verify route as its contract says (key goodKey is user 7 of group admin).
type upstream struct {
	srv         *httptest.Server
	verifyCalls atomic.Int32
	// calls counts every other request.
	calls atomic.Int32
}

func newUpstream(t testing.TB, svc route.Service) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// Real services echo the request id too; the gateway must not send it twice.
		w.Header().Set("X-Request-Id", r.Header.Get("X-Request-Id"))
		if svc == route.User && r.URL.Path == verifyAt {
			u.verifyCalls.Add(1)
			var in struct{ Key string }
			_ = json.NewDecoder(r.Body).Decode(&in)
			if id, ok := testKeys[in.Key]; ok && r.Header.Get("X-Internal-Token") == token {
				_, _ = io.WriteString(w, `{"success":true,"message":"","data":`+id+`}`)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"success":false,"message":"X-Api-Key: unknown","data":[]}`)
			return
		}
		u.calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		data, _ := json.Marshal(echo{Service: string(svc), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(body), Header: r.Header})
		_, _ = io.WriteString(w, `{"success":true,"message":"","data":`+string(data)+`}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

type options struct {
	upstreamTimeout time.Duration
	bodyLimit       int64
	rps             float64
	burst           int
	// urls overrides (or with "", removes) a service's upstream.
	urls map[route.Service]string
	// health answers the health check (nil: the 501 placeholder).
	health gin.HandlerFunc
	// authFailures and streams are the 401 limiter per address and the stream bound (nil: none).
	authFailures *ratelimit.Limiter
	streams      *ratelimit.Streams
	// spec serves the API description.
	spec bool
	// uploadStall is Deps.UploadStall.
	uploadStall time.Duration
	// openRoutes is Deps.OpenRoutes.
	openRoutes bool
}

type harness struct {
	srv       *httptest.Server
	handler   http.Handler
	upstreams map[route.Service]*upstream
}

func newHarness(t testing.TB, o options) *harness {
	t.Helper()
	if o.upstreamTimeout == 0 {
		o.upstreamTimeout = 2 * time.Second
	}
	if o.bodyLimit == 0 {
		o.bodyLimit = 1 << 20
	}
	if o.rps == 0 {
		o.rps, o.burst = 1e6, 1e6
	}
	h := &harness{upstreams: map[route.Service]*upstream{}}
	raw := map[route.Service]string{}
	for _, svc := range route.Services() {
		u := newUpstream(t, svc)
		h.upstreams[svc] = u
		raw[svc] = u.srv.URL
	}
	for svc, url := range o.urls {
		raw[svc] = url
	}
	ups, err := route.ParseUpstreams(raw)
	require.NoError(t, err)
	users := svcclient.New("user", raw[route.User], token, time.Second)
	deps := Deps{
		Ops:          ops.New("gateway"),
		Log:          testLogger(t),
		Routes:       route.Table(),
		Upstreams:    ups,
		Auth:         auth.NewCache(auth.UserService(users), auth.Options{TTL: 5 * time.Second, NegativeTTL: time.Second}),
		Limiter:      ratelimit.New(ratelimit.Options{RPS: o.rps, Burst: o.burst}),
		Proxy:        proxy.New(proxy.Config{InternalToken: token, UpstreamTimeout: o.upstreamTimeout}, zap.NewNop()),
		BodyLimit:    o.bodyLimit,
		Health:       o.health,
		AuthFailures: o.authFailures,
		Streams:      o.streams,
		UploadStall:  o.uploadStall,
		OpenRoutes:   o.openRoutes,
	}
	if o.spec {
		deps.SpecYAML = api.YAML
		deps.SpecJSON, err = api.JSON()
		require.NoError(t, err)
	}
	h.handler, err = New(deps)
	require.NoError(t, err)
	h.srv = h.server(t)
	return h
}

// forwarded is how many requests the upstreams got, key verification aside.
func (h *harness) forwarded() int32 {
	var n int32
	for _, u := range h.upstreams {
		n += u.calls.Load()
	}
	return n
}

func (h *harness) server(t testing.TB) *httptest.Server {
	s := httptest.NewServer(h.handler)
	t.Cleanup(s.Close)
	return s
}

// do sends one request through a real server in front of the gateway handler (gin's writer needs
// one: a recorder lacks CloseNotify), with goodKey unless header says otherwise.
func (h *harness) do(t *testing.T, method, target string, body io.Reader, header http.Header) (*httptest.ResponseRecorder, envelope) {
	t.Helper()
	r, err := http.NewRequest(method, h.srv.URL+target, body)
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Api-Key", goodKey)
	for k, v := range header {
		r.Header[k] = v
	}
	resp, err := h.srv.Client().Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	w := httptest.NewRecorder()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(raw)
	var env envelope
	require.NoError(t, json.Unmarshal(raw, &env), "body %q", raw)
	return w, env
}

func echoOf(t *testing.T, env envelope) echo {
	t.Helper()
	var e echo
	require.NoError(t, json.Unmarshal(env.Data, &e))
	return e
}

var param = regexp.MustCompile(`:[A-Za-z_]+`)

func TestEveryRouteWithAndWithoutSlashReachesItsService(t *testing.T) {
	h := newHarness(t, options{})
	for _, r := range route.Table() {
		path := param.ReplaceAllString(r.Path, "12")
		for _, target := range []string{path, path + "/"} {
			t.Run(r.Method+" "+target, func(t *testing.T) {
				w, env := h.do(t, r.Method, target+"?a=1", strings.NewReader(`{}`), nil)
				if r.Service == route.Gateway {
					assert.Equal(t, http.StatusNotImplemented, w.Code)
					assert.False(t, env.Success)
					return
				}
				require.Equal(t, http.StatusOK, w.Code, w.Body.String())
				e := echoOf(t, env)
				assert.Equal(t, string(r.Service), e.Service)
				want := path
				if r.UpstreamPath != "" {
					want = r.UpstreamPath
				}
				assert.Equal(t, want, e.Path, "forwarded without the trailing slash")
				assert.Equal(t, r.Method, e.Method)
				assert.Equal(t, "a=1", e.Query)
			})
		}
	}
}

func TestUnknownRoutesAre404(t *testing.T) {
	h := newHarness(t, options{})
	for _, target := range []string{"/", "/v2/nope", "/v2/order", "/v2/order/detail", "/v2/order/detail/1/extra", "/internal/auth/verify", "/internal/health", "/internal/users/check/"} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			w, env := h.do(t, m, target, nil, nil)
			assert.Equal(t, http.StatusNotFound, w.Code, "%s %s", m, target)
			assert.False(t, env.Success)
			assert.JSONEq(t, `[]`, string(env.Data))
			assert.NotEmpty(t, w.Header().Get("X-Request-Id"))
		}
	}
	assert.Zero(t, h.upstreams[route.User].verifyCalls.Load(), "nothing reached the user service")
}

func TestWrongMethodIs405(t *testing.T) {
	h := newHarness(t, options{})
	w, env := h.do(t, http.MethodGet, "/v2/order/create/", nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
	assert.Equal(t, "POST", w.Header().Get("Allow"))
	assert.NotEmpty(t, w.Header().Get("X-Request-Id"))
	assert.False(t, env.Success)
	assert.Equal(t, "method GET is not allowed on /v2/order/create", env.Message)
}

func TestServiceWithoutURLIs501(t *testing.T) {
	h := newHarness(t, options{urls: map[route.Service]string{route.Lead: "", route.Notification: ""}})
	for _, target := range []string{"/v2/lead/", "/v2/lead/detail/3", "/v1/lead/create/"} {
		method := http.MethodGet
		if strings.HasPrefix(target, "/v1") {
			method = http.MethodPost
		}
		w, env := h.do(t, method, target, nil, nil)
		assert.Equal(t, http.StatusNotImplemented, w.Code, target)
		assert.Equal(t, "lead service is not deployed", env.Message)
	}
	w, env := h.do(t, http.MethodPost, "/v2/notification/public", nil, nil)
	assert.Equal(t, http.StatusNotImplemented, w.Code)
	assert.Equal(t, "notification service is not deployed", env.Message)
	w, _ = h.do(t, http.MethodGet, "/v2/order/detail/1", nil, nil)
	assert.Equal(t, http.StatusOK, w.Code, "other services unaffected")
}

func TestHealthCheckIsTheGatewaysOwnAndNeedsAKey(t *testing.T) {
	h := newHarness(t, options{health: func(c *gin.Context) { web.OK(c, gin.H{"serviceGateway": gin.H{"success": true}}) }})
	for _, p := range []string{"/v1/health/check/", "/v1/health/check"} {
		w, env := h.do(t, http.MethodGet, p, nil, nil)
		assert.Equal(t, http.StatusOK, w.Code, p)
		assert.JSONEq(t, `{"serviceGateway":{"success":true}}`, string(env.Data))
	}
	w, _ := h.do(t, http.MethodGet, "/v1/health/check/", nil, http.Header{"X-Api-Key": {""}})
	assert.Equal(t, http.StatusUnauthorized, w.Code)

	w, env := newHarness(t, options{}).do(t, http.MethodGet, "/v1/health/check/", nil, nil)
	assert.Equal(t, http.StatusNotImplemented, w.Code, "a handler built without a checker")
	assert.False(t, env.Success)
}

func TestLivezNeedsNoKey(t *testing.T) {
	h := newHarness(t, options{})
	w, env := h.do(t, http.MethodGet, "/livez/", nil, http.Header{"X-Api-Key": {""}})
	assert.Equal(t, http.StatusOK, w.Code)
	assert.True(t, env.Success)
}

func TestAuth(t *testing.T) {
	h := newHarness(t, options{})
	w, env := h.do(t, http.MethodGet, "/v2/order/detail/1", nil, http.Header{"X-Api-Key": {""}})
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, "X-Api-Key: missing", env.Message)
	assert.NotEmpty(t, w.Header().Get("X-Request-Id"))

	w, env = h.do(t, http.MethodGet, "/v2/order/detail/1", nil, http.Header{"X-Api-Key": {"bad"}})
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, "X-Api-Key: unknown or revoked key", env.Message)

	for range 20 {
		w, _ = h.do(t, http.MethodGet, "/v2/order/detail/1", nil, nil)
		require.Equal(t, http.StatusOK, w.Code)
	}
	assert.Equal(t, int32(2), h.upstreams[route.User].verifyCalls.Load(), "one call per key, then the cache")
}

func TestAuthBurstMakesOneVerifyCall(t *testing.T) {
	h := newHarness(t, options{})
	srv := h.srv
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v2/call/", nil)
			req.Header.Set("X-Api-Key", goodKey)
			resp, err := srv.Client().Do(req)
			if assert.NoError(t, err) {
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), h.upstreams[route.User].verifyCalls.Load())
}

func TestUserServiceDownIs503Fast(t *testing.T) {
	h := newHarness(t, options{urls: map[route.Service]string{route.User: closedURL(t)}})
	start := time.Now()
	w, env := h.do(t, http.MethodGet, "/v2/order/detail/1", nil, nil)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, "authentication is unavailable: the user service did not answer", env.Message)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestHeadersAreStrippedAndSet(t *testing.T) {
	h := newHarness(t, options{})
	w, env := h.do(t, http.MethodPost, "/v2/order/create/", strings.NewReader(`{"title":"x"}`), http.Header{
		"X-User-Id":        {"999"},
		"X-Access-Group":   {"admin-forged"},
		"X-Internal-Token": {"guessed"},
		"X-Request-Id":     {"req-abc"},
		"Connection":       {"X-User-Id, X-Hop"},
		"X-Hop":            {"1"},
		"Keep-Alive":       {"timeout=5"},
		"X-Custom":         {"kept"},
	})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	e := echoOf(t, env)
	hd := http.Header(e.Header)
	assert.Equal(t, []string{"7"}, hd.Values("X-User-Id"))
	assert.Equal(t, []string{"admin"}, hd.Values("X-Access-Group"))
	assert.Equal(t, []string{token}, hd.Values("X-Internal-Token"))
	assert.Equal(t, []string{"req-abc"}, hd.Values("X-Request-Id"))
	assert.Empty(t, hd.Values("X-Api-Key"), "the raw key stays at the gateway")
	assert.Empty(t, hd.Values("X-Hop"), "hop-by-hop headers are dropped")
	assert.Empty(t, hd.Values("Keep-Alive"))
	assert.Equal(t, "kept", hd.Get("X-Custom"))
	assert.Equal(t, "application/json", hd.Get("Content-Type"))
	assert.Equal(t, `{"title":"x"}`, e.Body)
	assert.Equal(t, []string{"req-abc"}, w.Header().Values("X-Request-Id"), "echoed once")
}

func TestRequestIDEcho(t *testing.T) {
	h := newHarness(t, options{bodyLimit: 10})
	cases := []struct {
		name   string
		method string
		target string
		body   string
		key    string
		status int
	}{
		{"proxied", http.MethodGet, "/v2/order/detail/1", "", goodKey, http.StatusOK},
		{"unauthorized", http.MethodGet, "/v2/order/detail/1", "", "", http.StatusUnauthorized},
		{"unknown route", http.MethodGet, "/nope", "", goodKey, http.StatusNotFound},
		{"too large", http.MethodPost, "/v2/order/create", strings.Repeat("x", 11), goodKey, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rid := "rid-" + strings.ReplaceAll(tc.name, " ", "-")
			w, _ := h.do(t, tc.method, tc.target, strings.NewReader(tc.body), http.Header{"X-Api-Key": {tc.key}, "X-Request-Id": {rid}})
			assert.Equal(t, tc.status, w.Code)
			assert.Equal(t, []string{rid}, w.Header().Values("X-Request-Id"))

			w, _ = h.do(t, tc.method, tc.target, strings.NewReader(tc.body), http.Header{"X-Api-Key": {tc.key}})
			assert.Len(t, w.Header().Values("X-Request-Id"), 1, "made by the gateway when absent")
			assert.NotEmpty(t, w.Header().Get("X-Request-Id"))
		})
	}
}

func TestBodyLimit(t *testing.T) {
	h := newHarness(t, options{bodyLimit: 64})
	srv := h.srv
	send := func(body io.Reader, chunked bool) (int, envelope) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v2/order/create/", body)
		require.NoError(t, err)
		if chunked {
			req.ContentLength = -1 // sent with Transfer-Encoding: chunked
		}
		req.Header.Set("X-Api-Key", goodKey)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var env envelope
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		return resp.StatusCode, env
	}
	big := strings.Repeat("x", 65)
	small := `{"title":"fits"}`

	status, env := send(strings.NewReader(big), false)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "Content-Length over the limit")
	assert.Equal(t, "body: must be at most 64 bytes", env.Message)

	status, env = send(io.NopCloser(strings.NewReader(big)), true)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, "chunked over the limit")
	assert.Equal(t, "body: must be at most 64 bytes", env.Message)

	status, env = send(io.NopCloser(strings.NewReader(small)), true)
	require.Equal(t, http.StatusOK, status, "chunked within the limit")
	e := echoOf(t, env)
	assert.Equal(t, small, e.Body)
	assert.Equal(t, []string{"16"}, http.Header(e.Header).Values("Content-Length"), "forwarded with a plain length")

	status, _ = send(strings.NewReader(small), false)
	assert.Equal(t, http.StatusOK, status)
}

func TestRateLimit(t *testing.T) {
	h := newHarness(t, options{rps: 1, burst: 2})
	for range 2 {
		w, _ := h.do(t, http.MethodGet, "/v2/call", nil, nil)
		require.Equal(t, http.StatusOK, w.Code)
	}
	w, env := h.do(t, http.MethodGet, "/v2/call", nil, nil)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	assert.False(t, env.Success)
	assert.NotEmpty(t, w.Header().Get("X-Request-Id"))
}

// closedURL is the address of a port nobody listens on.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

func TestUpstreamFailures(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(broken.Close)
	down := closedURL(t)

	h := newHarness(t, options{upstreamTimeout: 200 * time.Millisecond, urls: map[route.Service]string{
		route.Order: down,
		route.Call:  slow.URL,
		route.Lead:  broken.URL,
	}})
	cases := []struct {
		name, method, target string
		status               int
		message              string
	}{
		{"down", http.MethodGet, "/v2/order/detail/1", http.StatusServiceUnavailable, "order service is unavailable"},
		{"slow", http.MethodGet, "/v2/call/detail/1", http.StatusGatewayTimeout, "call service did not answer in time"},
		{"broken", http.MethodGet, "/v2/lead/detail/1", http.StatusBadGateway, "lead service gave no valid answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			w, env := h.do(t, tc.method, tc.target, nil, http.Header{"X-Request-Id": {"rid"}})
			assert.Less(t, time.Since(start), 2*time.Second, "answers fast")
			assert.Equal(t, tc.status, w.Code)
			assert.Equal(t, tc.message, env.Message)
			assert.False(t, env.Success)
			assert.JSONEq(t, `[]`, string(env.Data))
			assert.NotContains(t, w.Body.String(), "127.0.0.1")
			assert.Equal(t, []string{"rid"}, w.Header().Values("X-Request-Id"))
		})
	}
}

// The event stream must outlive the server's read and write timeouts and reach the client event
// by event, not when the upstream finishes.
func TestStreamOutlivesServerTimeoutsAndFlushes(t *testing.T) {
	sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := range 4 {
			_, _ = io.WriteString(w, "data: "+string(rune('a'+i))+"\n\n")
			http.NewResponseController(w).Flush()
			select {
			case <-time.After(200 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(sse.Close)
	h := newHarness(t, options{urls: map[route.Service]string{route.Notification: sse.URL}})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	timeouts := web.ServerTimeouts{ReadHeader: time.Second, Read: 300 * time.Millisecond, Write: 300 * time.Millisecond, Idle: time.Second, Shutdown: time.Second}
	go func() { done <- web.Serve(ctx, ln, h.handler, timeouts, zap.NewNop()) }()
	t.Cleanup(func() { cancel(); <-done })

	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/v2/notification/stream/", nil)
	req.Header.Set("X-Api-Key", goodKey)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))

	sc := bufio.NewScanner(resp.Body)
	var events []string
	var firstAt time.Duration
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			if len(events) == 0 {
				firstAt = time.Since(start)
			}
			events = append(events, strings.TrimPrefix(line, "data: "))
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, []string{"a", "b", "c", "d"}, events, "the whole stream, past the 300ms timeouts")
	assert.Less(t, firstAt, 300*time.Millisecond, "the first event is flushed at once")
	assert.Greater(t, time.Since(start), 600*time.Millisecond)
}

// A route that is not a stream keeps the server's write timeout.
func TestOrdinaryRoutesKeepWriteTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"success":true,"message":"","data":[]}`)
	}))
	t.Cleanup(slow.Close)
	h := newHarness(t, options{urls: map[route.Service]string{route.Call: slow.URL}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	timeouts := web.ServerTimeouts{ReadHeader: time.Second, Read: time.Second, Write: 200 * time.Millisecond, Idle: time.Second, Shutdown: time.Second}
	go func() { done <- web.Serve(ctx, ln, h.handler, timeouts, zap.NewNop()) }()
	t.Cleanup(func() { cancel(); <-done })

	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/v2/call", nil)
	req.Header.Set("X-Api-Key", goodKey)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	assert.Error(t, err, "the write deadline cut the answer")
}

func testLogger(t testing.TB) *zap.Logger {
	if testing.Verbose() {
		l, _ := zap.NewDevelopment()
		return l
	}
	return zap.NewNop()
}

// A body sent slower than the server's read timeout is answered 408 with the envelope and the
// connection closed, on the forwarding loop and the reverse proxy alike (a chunked body is read by
// the gateway itself), never with a made-up status.
func TestSlowBodyIs408(t *testing.T) {
	h := newHarness(t, options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		timeouts := web.DefaultTimeouts
		timeouts.Read = 300 * time.Millisecond
		done <- web.Serve(ctx, ln, h.handler, timeouts, zap.NewNop())
	}()
	t.Cleanup(func() { cancel(); <-done })

	for name, framing := range map[string]string{
		"content length": "Content-Length: 20\r\n",
		"chunked":        "Transfer-Encoding: chunked\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, "POST /v2/order/create/ HTTP/1.1\r\nHost: gw\r\nX-Api-Key: "+goodKey+
				"\r\nContent-Type: application/json\r\n"+framing+"\r\n")
			require.NoError(t, err)
			first := "{"
			if strings.HasPrefix(framing, "Transfer") {
				first = "1\r\n{\r\n"
			}
			_, err = io.WriteString(conn, first)
			require.NoError(t, err)
			// ... and nothing more, as a client sending a byte now and then would.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
			var env envelope
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
			assert.False(t, env.Success)
			assert.Contains(t, env.Message, "body: not received in time")
		})
	}
}

func TestFailedAuthenticationsAreLimitedPerAddress(t *testing.T) {
	h := newHarness(t, options{authFailures: ratelimit.New(ratelimit.Options{RPS: 0.001, Burst: 3})})
	for i := range 3 {
		w, _ := h.do(t, http.MethodGet, "/v2/order/detail/1", nil, http.Header{"X-Api-Key": {fmt.Sprintf("guess-%d", i)}})
		assert.Equal(t, http.StatusUnauthorized, w.Code)
	}
	calls := h.upstreams[route.User].verifyCalls.Load()
	assert.Equal(t, int32(3), calls)
	for _, key := range []string{"guess-3", "guess-4", goodKey} {
		w, env := h.do(t, http.MethodGet, "/v2/order/detail/1", nil, http.Header{"X-Api-Key": {key}})
		assert.Equal(t, http.StatusTooManyRequests, w.Code, key)
		assert.NotEmpty(t, w.Header().Get("Retry-After"))
		assert.Contains(t, env.Message, "unknown X-Api-Key from this address")
	}
	assert.Equal(t, calls, h.upstreams[route.User].verifyCalls.Load(), "a blocked address costs the user service nothing")

	// The same unknown key again within the negative cache's time is not asked about again.
	h = newHarness(t, options{})
	for range 5 {
		w, _ := h.do(t, http.MethodGet, "/v2/order/detail/1", nil, http.Header{"X-Api-Key": {"same-guess"}})
		assert.Equal(t, http.StatusUnauthorized, w.Code)
	}
	assert.Equal(t, int32(1), h.upstreams[route.User].verifyCalls.Load())
}

func TestLiveStreamsAreBoundedPerKey(t *testing.T) {
	release := make(chan struct{})
	notifications := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(notifications.Close)
	t.Cleanup(func() { close(release) })
	streams := ratelimit.NewStreams(2)
	h := newHarness(t, options{streams: streams, urls: map[route.Service]string{route.Notification: notifications.URL}})

	open := func() *http.Response {
		req, err := http.NewRequest(http.MethodGet, h.srv.URL+"/v2/notification/stream/", nil)
		require.NoError(t, err)
		req.Header.Set("X-Api-Key", goodKey)
		resp, err := h.srv.Client().Do(req)
		require.NoError(t, err)
		return resp
	}
	first, second := open(), open()
	assert.Equal(t, http.StatusOK, first.StatusCode)
	assert.Equal(t, http.StatusOK, second.StatusCode)
	third := open()
	body, _ := io.ReadAll(third.Body)
	third.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, third.StatusCode, "%s", body)
	assert.Contains(t, string(body), "at most 2 at once")

	// Closing one frees its slot.
	first.Body.Close()
	key := auth.HashKey(goodKey)
	require.Eventually(t, func() bool { return streams.Open(string(key[:])) == 1 }, 5*time.Second, 10*time.Millisecond)
	fourth := open()
	assert.Equal(t, http.StatusOK, fourth.StatusCode)
	fourth.Body.Close()
	second.Body.Close()
}

// The route's policy is enforced before anything is forwarded; the forwarded request carries the
// key's id and scopes, never the client's own.
func TestPolicyIsEnforcedBeforeForwarding(t *testing.T) {
	h := newHarness(t, options{})
	for _, tc := range []struct {
		key, method, path string
		status            int
		message           string
	}{
		{"client-key", http.MethodPost, "/v2/order/create", http.StatusOK, ""},
		{"client-key", http.MethodGet, "/v2/agent-group", http.StatusForbidden, "the client access group may not call GET /v2/agent-group/"},
		{"client-key", http.MethodPost, "/v2/notification/public", http.StatusForbidden, "the client access group may not call"},
		{"agent-key", http.MethodPost, "/v2/order/update/5", http.StatusForbidden, "the call-center access group may not call POST /v2/order/update/:orderId/"},
		{"agent-key", http.MethodGet, "/v2/lead", http.StatusOK, ""},
		{"nogroup-key", http.MethodGet, "/v2/lead", http.StatusForbidden, "the (none) access group may not call"},
		{"nogroup-key", http.MethodGet, "/v2/notification", http.StatusOK, ""},
		{"readonly-key", http.MethodGet, "/v2/lead", http.StatusOK, ""},
		{"readonly-key", http.MethodPost, "/v2/lead/create", http.StatusForbidden, "the key's scopes do not include leads:write"},
		{"readonly-key", http.MethodGet, "/v2/call", http.StatusForbidden, "calls:read"},
		{"readonly-key", http.MethodGet, "/v2/api-key", http.StatusForbidden, "a key narrowed by scopes cannot manage API keys"},
		{"client-key", http.MethodGet, "/v2/api-key", http.StatusOK, ""},
	} {
		before := h.forwarded()
		w, env := h.do(t, tc.method, tc.path, strings.NewReader(`{}`), http.Header{"X-Api-Key": {tc.key}})
		assert.Equal(t, tc.status, w.Code, "%s %s %s: %s", tc.key, tc.method, tc.path, env.Message)
		if tc.message != "" {
			assert.Contains(t, env.Message, tc.message)
			assert.False(t, env.Success)
			assert.Equal(t, before, h.forwarded(), "a refused request reaches no upstream")
		}
	}

	_, env := h.do(t, http.MethodGet, "/v2/lead", nil, http.Header{"X-Api-Key": {"readonly-key"},
		"X-Key-Id": {"1"}, "X-Key-Scopes": {"orders:write"}})
	var e echo
	require.NoError(t, json.Unmarshal(env.Data, &e))
	assert.Equal(t, []string{"81"}, e.Header["X-Key-Id"])
	assert.Equal(t, []string{"leads:read,orders:read"}, e.Header["X-Key-Scopes"])
	assert.Equal(t, []string{"8"}, e.Header["X-User-Id"])
}

// OpenRoutes (the bench's gateway without the policy) lets every verified key through, and only a
// verified one.
func TestOpenRoutesSkipThePolicyOnly(t *testing.T) {
	h := newHarness(t, options{openRoutes: true})
	for _, tc := range []struct{ key, method, path string }{
		{"client-key", http.MethodGet, "/v2/agent-group"},
		{"nogroup-key", http.MethodGet, "/v2/lead"},
		{"readonly-key", http.MethodPost, "/v2/lead/create"},
	} {
		w, env := h.do(t, tc.method, tc.path, strings.NewReader(`{}`), http.Header{"X-Api-Key": {tc.key}})
		assert.Equal(t, http.StatusOK, w.Code, "%s %s %s: %s", tc.key, tc.method, tc.path, env.Message)
	}
	w, _ := h.do(t, http.MethodGet, "/v2/lead", nil, http.Header{"X-Api-Key": {"unknown-key"}})
	assert.Equal(t, http.StatusUnauthorized, w.Code)
}

// A path parameter or query value that is not clean text (PostgreSQL refuses NUL and invalid
// UTF-8) is a 400 naming the parameter as the route table does, on every route, and reaches no
// upstream; odd values that are clean text are the service's to judge.
func TestBadTextInPathOrQueryIsRefusedBeforeForwarding(t *testing.T) {
	h := newHarness(t, options{})
	refused := func(t *testing.T, method, target, field string) {
		t.Helper()
		before := h.forwarded()
		w, env := h.do(t, method, target, strings.NewReader(`{}`), nil)
		require.Equal(t, http.StatusBadRequest, w.Code, "%s %s: %s", method, target, w.Body.String())
		assert.False(t, env.Success)
		assert.Contains(t, env.Message, field+": "+web.RuleText)
		var data web.ValidationData
		require.NoError(t, json.Unmarshal(env.Data, &data))
		assert.Equal(t, web.RuleText, data.Errors[field])
		assert.Equal(t, before, h.forwarded(), "%s %s reached an upstream", method, target)
	}
	for _, r := range route.Table() {
		names := param.FindAllString(r.Path, -1)
		for _, bad := range []string{"%00", "%ff", "%c3%28", "%1b", "%7f"} {
			for _, name := range names {
				target := strings.Replace(r.Path, name, bad, 1)
				refused(t, r.Method, param.ReplaceAllString(target, "12")+"/", name[1:])
			}
			refused(t, r.Method, param.ReplaceAllString(r.Path, "12")+"/?orderId=1&orderCode="+bad, "orderCode")
		}
	}
	// Clean text, however odd, goes on as it came: the service says whether it is an id.
	for _, v := range []string{"99999999999999999999", "-1", "..", "%D0%BA%D0%BE%D0%B4"} {
		w, env := h.do(t, http.MethodPost, "/v2/webhook/14/redeliver/"+v+"/?orderCode="+v, strings.NewReader(`{}`), nil)
		require.Equal(t, http.StatusOK, w.Code, "%s: %s", v, env.Message)
		e := echoOf(t, env)
		decoded, err := url.PathUnescape(v)
		require.NoError(t, err)
		assert.Equal(t, "/v2/webhook/14/redeliver/"+decoded, e.Path)
		assert.Equal(t, "orderCode="+v, e.Query)
	}
	// An escaped slash is a character of its segment, which no parameter may hold: it would reach
	// the service as more segments. Nor is one at the end a trailing slash to trim.
	for _, tc := range []struct{ method, target, field string }{
		{http.MethodPost, "/v2/webhook/14/redeliver/a%2Fb/", "eventId"},
		{http.MethodPost, "/v2/webhook/%2F/redeliver/1", "webhookId"},
		{http.MethodGet, "/v2/lead/import/%2F/", "importId"},
		{http.MethodGet, "/v2/lead/import/%2f", "importId"},
	} {
		before := h.forwarded()
		w, env := h.do(t, tc.method, tc.target, nil, nil)
		require.Equal(t, http.StatusBadRequest, w.Code, "%s %s: %s", tc.method, tc.target, w.Body.String())
		assert.Equal(t, tc.field+": "+web.RuleSegment, env.Message)
		assert.Equal(t, before, h.forwarded())
	}
	// Any other escape in a parameter is only another spelling of its value.
	w, env := h.do(t, http.MethodGet, "/v2/order/detail/%31%32/", nil, nil)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, "/v2/order/detail/12", echoOf(t, env).Path)
}

// Every answer of an authenticated route tells the client its rate: the bucket's size, what is
// left, and when it is full again; a 429 adds Retry-After.
func TestRateLimitHeaders(t *testing.T) {
	h := newHarness(t, options{rps: 0.5, burst: 3})
	for want := 2; want >= 0; want-- {
		w, _ := h.do(t, http.MethodGet, "/v2/order/detail/1", nil, nil)
		require.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "3", w.Header().Get("RateLimit-Limit"))
		assert.Equal(t, strconv.Itoa(want), w.Header().Get("RateLimit-Remaining"))
		reset, err := strconv.Atoi(w.Header().Get("RateLimit-Reset"))
		require.NoError(t, err)
		assert.InDelta(t, 2*(3-want), reset, 1, "seconds until the bucket is full again")
		assert.Empty(t, w.Header().Get("Retry-After"))
	}
	w, env := h.do(t, http.MethodGet, "/v2/order/detail/1", nil, nil)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.False(t, env.Success)
	assert.Equal(t, "0", w.Header().Get("RateLimit-Remaining"))
	assert.NotEmpty(t, w.Header().Get("Retry-After"))
}

// The API description is served without a key, as written and as JSON.
func TestDescriptionIsServedWithoutAKey(t *testing.T) {
	h := newHarness(t, options{spec: true})
	for path, ct := range map[string]string{"/openapi.yaml": "application/yaml", "/openapi.json": "application/json"} {
		resp, err := h.srv.Client().Get(h.srv.URL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, ct, resp.Header.Get("Content-Type"), path)
		assert.Contains(t, string(body), "/v2/lead/create/", path)
	}
	resp, err := h.srv.Client().Get(h.srv.URL + "/openapi.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	var doc map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	assert.Equal(t, "3.0.3", doc["openapi"])
}

// The API reference page (package docs) is as public as the description it renders: no key, no
// key verification, none of the API's limits, nothing forwarded.
func TestDocsPageNeedsNoKeyAndNoLimit(t *testing.T) {
	h := newHarness(t, options{spec: true, rps: 1, burst: 1,
		authFailures: ratelimit.New(ratelimit.Options{RPS: 0.001, Burst: 1})})
	for i := 0; i < 5; i++ {
		for _, path := range []string{"/docs/", "/docs/redoc.standalone.js"} {
			resp, err := h.srv.Client().Get(h.srv.URL + path)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode, path)
			assert.Empty(t, resp.Header.Get("RateLimit-Limit"), path)
		}
	}
	assert.Zero(t, h.upstreams[route.User].verifyCalls.Load(), "no key verified")
	assert.Zero(t, h.forwarded())

	// Without the description there is nothing to render: no page either.
	w, _ := newHarness(t, options{}).do(t, http.MethodGet, "/docs/", nil, nil)
	assert.Equal(t, http.StatusNotFound, w.Code)
}

// An upload's body goes to the upstream as it arrives, never held whole by the gateway: the
// upstream sees its first bytes while the client is still sending, and its answer before the
// body's end (a refusal) reaches the client at once, the connection then closed.
func TestUploadBodiesStreamToTheUpstream(t *testing.T) {
	got := make(chan string, 1)
	lead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"success":false,"message":"refused before the end","data":[]}`)
	}))
	t.Cleanup(lead.Close)
	h := newHarness(t, options{urls: map[route.Service]string{route.Lead: lead.URL}})
	conn := startSending(t, h.srv.Listener.Addr().String(), 8<<20, "phone")
	select {
	case first := <-got:
		assert.Equal(t, "phone", first)
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream never saw the body's first bytes")
	}
	resp, env := answerOf(t, conn)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "refused before the end", env.Message)
	assert.True(t, resp.Close, "Connection: close")
}

// An upload whose client goes quiet is answered 408 by the gateway after the longest pause, and
// the upstream's request is ended with it.
func TestAStalledUploadIs408(t *testing.T) {
	ended := make(chan error, 1)
	lead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		ended <- err
	}))
	t.Cleanup(lead.Close)
	h := newHarness(t, options{urls: map[route.Service]string{route.Lead: lead.URL}, uploadStall: 300 * time.Millisecond})
	start := time.Now()
	conn := startSending(t, h.srv.Listener.Addr().String(), 100, "phone")
	resp, env := answerOf(t, conn)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Contains(t, env.Message, "body: not received in time")
	assert.Less(t, time.Since(start), 3*time.Second)
	select {
	case err := <-ended:
		assert.Error(t, err, "the upstream's body ends short")
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's request never ended")
	}
}

// startSending opens an import upload announcing length bytes and sends only first.
func startSending(t *testing.T, addr string, length int, first string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /v2/lead/import/ HTTP/1.1\r\nHost: gw\r\nX-Api-Key: %s\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n%s",
		goodKey, length, first)
	require.NoError(t, err)
	return conn
}

// answerOf reads the answer on conn, waiting at most 5 s.
func answerOf(t *testing.T, conn net.Conn) (*http.Response, envelope) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "an answer within 5 s")
	defer resp.Body.Close()
	var env envelope
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	return resp, env
}
