package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeVerify knows key "good" (user 7, admin) and refuses the rest; it counts calls. With expires
// set, "good" ends then (on clk).
type fakeVerify struct {
	calls   atomic.Int32
	revoked atomic.Bool
	down    atomic.Bool
	expires *time.Time
	clk     *clock
}

func (f *fakeVerify) verify(_ context.Context, key string) (Identity, error) {
	f.calls.Add(1)
	switch {
	case f.down.Load():
		return Identity{}, apperr.Unavailablef("user service is unavailable")
	case f.expires != nil && !f.clk.Now().Before(*f.expires):
		return Identity{}, apperr.New(apperr.Unauthorized, "unknown key")
	case key == "good" && !f.revoked.Load():
		return Identity{UserID: 7, AccessGroup: "admin", ExpiresAt: f.expires}, nil
	default:
		return Identity{}, apperr.New(apperr.Unauthorized, "unknown key")
	}
}

func newCache(f *fakeVerify, clk *clock) *Cache {
	return NewCache(f.verify, Options{TTL: time.Second, NegativeTTL: time.Second, Now: clk.Now})
}

func TestCacheHitCostsNoCall(t *testing.T) {
	f, clk := &fakeVerify{}, &clock{now: time.Unix(1000, 0)}
	c := newCache(f, clk)
	for range 10 {
		id, err := c.Verify(context.Background(), "good")
		require.NoError(t, err)
		assert.Equal(t, Identity{UserID: 7, AccessGroup: "admin"}, id)
	}
	assert.Equal(t, int32(1), f.calls.Load())
}

func TestCacheExpiresSoRevocationTakesEffect(t *testing.T) {
	f, clk := &fakeVerify{}, &clock{now: time.Unix(1000, 0)}
	c := newCache(f, clk)
	_, err := c.Verify(context.Background(), "good")
	require.NoError(t, err)

	f.revoked.Store(true)
	clk.Add(900 * time.Millisecond)
	_, err = c.Verify(context.Background(), "good")
	require.NoError(t, err, "still trusted within the TTL")

	clk.Add(100 * time.Millisecond)
	_, err = c.Verify(context.Background(), "good")
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err), "refused once the TTL is over")
	assert.Equal(t, int32(2), f.calls.Load())
}

// A verified key is trusted for the TTL but never past its expiry: there the user service is asked
// again, and refuses it.
func TestCacheStopsAKeyAtItsExpiry(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	expires := clk.Now().Add(300 * time.Millisecond)
	f := &fakeVerify{expires: &expires, clk: clk}
	c := newCache(f, clk)
	_, err := c.Verify(context.Background(), "good")
	require.NoError(t, err)
	clk.Add(299 * time.Millisecond)
	_, err = c.Verify(context.Background(), "good")
	require.NoError(t, err, "trusted up to its expiry")
	assert.Equal(t, int32(1), f.calls.Load())
	clk.Add(time.Millisecond)
	_, err = c.Verify(context.Background(), "good")
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err), "refused at its expiry, within the TTL")
	assert.Equal(t, int32(2), f.calls.Load())
}

func TestNegativeCacheIsShort(t *testing.T) {
	f, clk := &fakeVerify{}, &clock{now: time.Unix(1000, 0)}
	c := newCache(f, clk)
	for range 5 {
		_, err := c.Verify(context.Background(), "bad")
		assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))
	}
	assert.Equal(t, int32(1), f.calls.Load())
	clk.Add(time.Second)
	_, _ = c.Verify(context.Background(), "bad")
	assert.Equal(t, int32(2), f.calls.Load(), "asked again after the negative TTL")
}

func TestUnavailableIsNotCached(t *testing.T) {
	f, clk := &fakeVerify{}, &clock{now: time.Unix(1000, 0)}
	c := newCache(f, clk)
	f.down.Store(true)
	_, err := c.Verify(context.Background(), "good")
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err))

	f.down.Store(false)
	_, err = c.Verify(context.Background(), "good")
	require.NoError(t, err, "works as soon as the user service is back")
}

func TestMissingKey(t *testing.T) {
	c := newCache(&fakeVerify{}, &clock{})
	_, err := c.Verify(context.Background(), "")
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))
}

func TestConcurrentRequestsMakeOneCall(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	c := NewCache(func(context.Context, string) (Identity, error) {
		calls.Add(1)
		<-release
		return Identity{UserID: 1}, nil
	}, Options{TTL: time.Minute})

	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := c.Verify(context.Background(), "k")
			errs <- err
		})
	}
	// Let every goroutine reach the shared call before it completes.
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, int32(1), calls.Load())
}

func TestOneCallerHangingUpDoesNotFailTheOthers(t *testing.T) {
	release := make(chan struct{})
	c := NewCache(func(ctx context.Context, _ string) (Identity, error) {
		<-release
		return Identity{UserID: 1}, ctx.Err()
	}, Options{TTL: time.Minute})

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := c.Verify(ctx, "k"); first <- err }()
	time.Sleep(20 * time.Millisecond)
	second := make(chan error, 1)
	go func() { _, err := c.Verify(context.Background(), "k"); second <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	close(release)
	assert.NoError(t, <-first)
	assert.NoError(t, <-second)
}

func TestCacheIsBoundedAndKeyedByHash(t *testing.T) {
	c := NewCache(func(context.Context, string) (Identity, error) { return Identity{UserID: 1}, nil },
		Options{TTL: time.Minute, MaxEntries: 10})
	for i := range 100 {
		_, err := c.Verify(context.Background(), "key-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, c.Len(), 10)
	c.mu.Lock()
	defer c.mu.Unlock()
	for h := range c.entries {
		assert.NotContains(t, string(h[:]), "key-", "raw keys are never stored")
	}
}

func TestUserServiceVerify(t *testing.T) {
	var gotToken string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotToken = r.Header.Get("X-Internal-Token")
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/internal/auth/verify" || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"success":false,"message":"no route","data":[]}`))
			return
		}
		var body struct{ Key string }
		_ = decodeJSON(r, &body)
		if body.Key == "good" {
			_, _ = w.Write([]byte(`{"success":true,"message":"","data":{"userId":7,"accessGroup":"call-center","expiresAt":"2026-11-21T10:00:00.25Z"}}`))
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"success":false,"message":"X-Api-Key: unknown","data":[]}`))
	}))
	defer srv.Close()

	verify := UserService(svcclient.New("user", srv.URL, "secret", time.Second))
	id, err := verify(context.Background(), "good")
	require.NoError(t, err)
	expires := time.Date(2026, 11, 21, 10, 0, 0, 250_000_000, time.UTC)
	assert.Equal(t, Identity{UserID: 7, AccessGroup: "call-center", ExpiresAt: &expires}, id)
	assert.Equal(t, "secret", gotToken)

	_, err = verify(context.Background(), "nope")
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))

	srv.Close()
	_, err = verify(context.Background(), "good")
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err))
	assert.False(t, errors.Is(err, context.Canceled))
}
