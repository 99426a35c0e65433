package ccapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The retry policy is tested against an HTTP server of the test's own that answers 429 and 503
// on demand (a real peer on a real socket); the client against the platform itself is the e2e
// suite's gateway/e2e/client_test.go.

// seen is one request as the server got it.
type seen struct {
	method, path, key, idem, body string
}

type server struct {
	t       *testing.T
	mu      sync.Mutex
	got     []seen
	answers []func(http.ResponseWriter) // one per request, the last repeated
	srv     *httptest.Server
}

func newServer(t *testing.T, answers ...func(http.ResponseWriter)) *server {
	s := &server{t: t, answers: answers}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, seen{r.Method, r.URL.Path, r.Header.Get("X-Api-Key"), r.Header.Get("Idempotency-Key"), string(b)})
		a := s.answers[min(len(s.got), len(s.answers))-1]
		s.mu.Unlock()
		a(w)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

func status(code int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == http.StatusOK {
			_, _ = io.WriteString(w, `{"success":true,"message":"","data":{"id":7}}`)
			return
		}
		_, _ = io.WriteString(w, `{"success":false,"message":"try later","data":[]}`)
	}
}

// emptyOK is the 200 of an operation that returns nothing (updates, deletes): data is [].
func emptyOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"success":true,"message":"","data":[]}`)
}

// noSleep records the waits instead of waiting.
func noSleep(waits *[]time.Duration) Option {
	return func(t *transport) {
		t.sleep = func(_ context.Context, d time.Duration) error { *waits = append(*waits, d); return nil }
	}
}

func order() OrderCreate {
	return OrderCreate{ServiceTitle: "S", Title: "T", Status: "success", SipEndpointIds: []int{1}}
}

func TestCreateRetriesWithOneIdempotencyKeyAfterRetryAfter(t *testing.T) {
	s := newServer(t, status(429, "2"), status(503, ""), status(200, ""))
	var waits []time.Duration
	c, err := New(s.srv.URL, "cck_test", noSleep(&waits))
	require.NoError(t, err)

	r, err := c.CreateOrderWithResponse(context.Background(), nil, order())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.StatusCode())
	require.NotNil(t, r.JSON200)

	got := s.requests()
	require.Len(t, got, 3)
	for _, g := range got {
		assert.Equal(t, "/v2/order/create/", g.path)
		assert.Equal(t, "cck_test", g.key)
		assert.Len(t, g.idem, 32, "a random 128-bit key, in hex")
		assert.Equal(t, got[0].idem, g.idem, "every try of one call carries the same key")
		assert.Equal(t, got[0].body, g.body, "the body is sent again whole")
	}
	assert.Contains(t, got[0].body, `"serviceTitle":"S"`)
	// 2 s as the 429 said; the 503 (the second try) named no wait: the backoff's second step.
	assert.Equal(t, []time.Duration{2 * time.Second, 2 * fallbackWait}, waits)

	// A second call is another create: another key.
	_, err = c.CreateOrderWithResponse(context.Background(), nil, order())
	require.NoError(t, err)
	assert.NotEqual(t, got[0].idem, s.requests()[3].idem)
}

func TestCallersIdempotencyKeyIsKept(t *testing.T) {
	s := newServer(t, status(200, ""))
	c, err := New(s.srv.URL, "k")
	require.NoError(t, err)
	key := "order-42"
	_, err = c.CreateOrderWithResponse(context.Background(), &CreateOrderParams{IdempotencyKey: &key}, order())
	require.NoError(t, err)
	assert.Equal(t, "order-42", s.requests()[0].idem)
}

func TestOnlyCreatesGetAKey(t *testing.T) {
	s := newServer(t, emptyOK, status(200, ""))
	c, err := New(s.srv.URL, "k")
	require.NoError(t, err)
	_, err = c.UpdateOrderWithResponse(context.Background(), 5, OrderWritable{})
	require.NoError(t, err)
	_, err = c.GetOrderWithResponse(context.Background(), 5)
	require.NoError(t, err)
	for _, g := range s.requests() {
		assert.Empty(t, g.idem, "%s %s", g.method, g.path)
		assert.Equal(t, "k", g.key)
	}
}

func TestGivesUpAfterMaxAttemptsAndOnLongWaits(t *testing.T) {
	s := newServer(t, status(503, "1"))
	var waits []time.Duration
	c, err := New(s.srv.URL, "k", WithMaxAttempts(3), noSleep(&waits))
	require.NoError(t, err)
	r, err := c.GetOrderWithResponse(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, r.StatusCode(), "the last answer is the caller's")
	assert.Len(t, s.requests(), 3)
	assert.Len(t, waits, 2)

	// A Retry-After beyond the bound is returned at once.
	s2 := newServer(t, status(429, "120"))
	waits = nil
	c, err = New(s2.srv.URL, "k", WithMaxRetryWait(time.Minute), noSleep(&waits))
	require.NoError(t, err)
	r, err = c.GetOrderWithResponse(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, r.StatusCode())
	assert.Len(t, s2.requests(), 1)
	assert.Empty(t, waits)
}

func TestNetworkErrorsAreRetriedOnlyWhenSafe(t *testing.T) {
	// A server that is gone: every try is a refused connection.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	var waits []time.Duration
	c, err := New(dead.URL, "k", WithMaxAttempts(3), noSleep(&waits))
	require.NoError(t, err)

	_, err = c.GetOrderWithResponse(context.Background(), 1)
	require.Error(t, err)
	assert.Len(t, waits, 2, "a GET is tried 3 times")

	waits = nil
	_, err = c.CreateOrderWithResponse(context.Background(), nil, order())
	require.Error(t, err)
	assert.Len(t, waits, 2, "a create with its idempotency key is tried 3 times")

	waits = nil
	_, err = c.UpdateOrderWithResponse(context.Background(), 5, OrderWritable{})
	require.Error(t, err)
	assert.Empty(t, waits, "an update without a key is tried once: it may have been applied")
}

func TestRetryWaitStopsWithTheContext(t *testing.T) {
	s := newServer(t, status(429, "5"))
	c, err := New(s.srv.URL, "k")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.GetOrderWithResponse(ctx, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestRetryAfterForms(t *testing.T) {
	assert.Equal(t, 3*time.Second, retryAfter("3", 1))
	assert.Equal(t, fallbackWait, retryAfter("", 1))
	assert.Equal(t, 4*fallbackWait, retryAfter("soon", 3))
	d := retryAfter(time.Now().Add(10*time.Second).UTC().Format(http.TimeFormat), 1)
	assert.InDelta(t, 10*time.Second, d, float64(2*time.Second))
	assert.Zero(t, retryAfter(time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 1))
}

func TestNewRefusesBadArguments(t *testing.T) {
	_, err := New("127.0.0.1:8080", "k")
	assert.Error(t, err)
	_, err = New("http://127.0.0.1:8080", "")
	assert.Error(t, err)
}
