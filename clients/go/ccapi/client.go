// Package ccapi is the typed Go client of the call-center platform's public API.
//
// api.gen.go is generated from gateway/api/openapi.yaml by oapi-codegen (`make client`); this file
// is the hand-written part every integrator would otherwise write again:
//
//   - the API key on every request (X-Api-Key);
//   - an Idempotency-Key on every create that accepts one (unless the caller set it), the same on
//     every retry of that call, so that a retried create never makes a second object;
//   - retries of 429 and 503 answers after their Retry-After (bounded), and of network errors of
//     requests that are safe to repeat (GET, or a POST with an Idempotency-Key).
//
// Use it as
//
//	c, err := ccapi.New("http://127.0.0.1:8080", apiKey)
//	r, err := c.CreateOrderWithResponse(ctx, nil, ccapi.OrderCreate{...})
//	if r.JSON200 != nil { ... }
package ccapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of the retry policy.
const (
	DefaultMaxAttempts  = 4
	DefaultMaxRetryWait = 30 * time.Second
	// fallbackWait is the wait before a retry when the answer names none (Retry-After absent or
	// unreadable): doubled on each further attempt.
	fallbackWait = 500 * time.Millisecond
)

// Option changes a setting of New.
type Option func(*transport)

// WithBaseHTTPClient sends through c (its Transport, Timeout, Jar...) instead of http.DefaultClient's
// transport. The client is copied; c itself is not changed.
func WithBaseHTTPClient(c *http.Client) Option {
	return func(t *transport) { t.httpClient = c }
}

// WithMaxAttempts bounds the tries of one call, the first included (1: never retry).
func WithMaxAttempts(n int) Option {
	return func(t *transport) { t.maxAttempts = max(n, 1) }
}

// WithMaxRetryWait is the longest Retry-After the client waits for; a longer one is returned to
// the caller as the answer (a 429 or 503) instead of blocking.
func WithMaxRetryWait(d time.Duration) Option {
	return func(t *transport) { t.maxWait = d }
}

// WithIdempotencyKeys makes the keys of creates with next instead of random 128-bit hex strings.
func WithIdempotencyKeys(next func() string) Option {
	return func(t *transport) { t.newKey = next }
}

// New returns a client of the API at baseURL (e.g. http://127.0.0.1:8080) that authenticates
// with apiKey.
func New(baseURL, apiKey string, opts ...Option) (*ClientWithResponses, error) {
	if apiKey == "" {
		return nil, errors.New("ccapi: empty API key")
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ccapi: base URL %q: want scheme://host[:port]", baseURL)
	}
	creates, err := idempotentCreates()
	if err != nil {
		return nil, err
	}
	t := &transport{
		apiKey: apiKey, maxAttempts: DefaultMaxAttempts, maxWait: DefaultMaxRetryWait,
		newKey: randomKey, sleep: sleep, creates: creates, basePath: strings.TrimRight(u.Path, "/"),
	}
	for _, o := range opts {
		o(t)
	}
	hc := http.Client{}
	if t.httpClient != nil {
		hc = *t.httpClient
	}
	t.base = hc.Transport
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	hc.Transport = t
	return NewClientWithResponses(baseURL, WithHTTPClient(&hc))
}

// idempotentCreates are the paths whose POST declares the Idempotency-Key header in the spec.
func idempotentCreates() (map[string]bool, error) {
	spec, err := GetSwagger()
	if err != nil {
		return nil, fmt.Errorf("ccapi: embedded spec: %w", err)
	}
	out := map[string]bool{}
	for path, item := range spec.Paths.Map() {
		if item.Post == nil {
			continue
		}
		for _, p := range item.Post.Parameters {
			if p.Value != nil && p.Value.In == "header" && http.CanonicalHeaderKey(p.Value.Name) == "Idempotency-Key" {
				out[path] = true
			}
		}
	}
	return out, nil
}

// transport adds the key, the idempotency keys and the retries to every request of the client.
type transport struct {
	base        http.RoundTripper
	httpClient  *http.Client
	apiKey      string
	maxAttempts int
	maxWait     time.Duration
	newKey      func() string
	sleep       func(context.Context, time.Duration) error
	creates     map[string]bool
	basePath    string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A RoundTripper must not change the caller's request.
	req = req.Clone(req.Context())
	req.Header.Set("X-Api-Key", t.apiKey)
	if req.Method == http.MethodPost && req.Header.Get("Idempotency-Key") == "" &&
		t.creates[strings.TrimPrefix(req.URL.Path, t.basePath)] {
		req.Header.Set("Idempotency-Key", t.newKey())
	}
	repeatable := req.Method == http.MethodGet || req.Header.Get("Idempotency-Key") != ""
	for attempt := 1; ; attempt++ {
		resp, err := t.base.RoundTrip(req)
		last := attempt >= t.maxAttempts || (req.Body != nil && req.GetBody == nil)
		var wait time.Duration
		switch {
		case err != nil:
			if last || !repeatable || req.Context().Err() != nil {
				return nil, err
			}
			wait = backoff(attempt)
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
			wait = retryAfter(resp.Header.Get("Retry-After"), attempt)
			if last || wait > t.maxWait {
				return resp, nil
			}
			// Read to the end so that the connection is reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		default:
			return resp, nil
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("ccapi: replaying the request body: %w", err)
			}
			req.Body = body
		}
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// retryAfter reads Retry-After (seconds or an HTTP date); without a usable one, a doubling backoff.
func retryAfter(v string, attempt int) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return backoff(attempt)
}

func backoff(attempt int) time.Duration { return fallbackWait << (attempt - 1) }

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func randomKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
