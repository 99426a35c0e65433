// Package auth decides who is calling: it verifies the X-Api-Key through the user service and
// remembers the answer for a moment (AUTH_CACHE_TTL, 1 s by default) and never past the key's
// expiry, so that a hit costs no network hop while a revoked key, an expired one or a deactivated
// user's stops working within that moment on every replica.
package auth

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
)

// HeaderAPIKey carries the caller's API key.
const HeaderAPIKey = "X-Api-Key"

// Identity is the verified owner of an API key, as the user service reports it, with the key's
// id and the scopes that narrow it (none: the owner's full rights).
type Identity struct {
	UserID      int64    `json:"userId"`
	AccessGroup string   `json:"accessGroup"`
	KeyID       int64    `json:"keyId"`
	Scopes      []string `json:"scopes"`
	// ExpiresAt ends the key (nil: it does not expire); the cache trusts it no longer.
	ExpiresAt *time.Time `json:"expiresAt"`
}

// HasScope reports whether the key may be used for what scope s covers: a key without scopes has
// its owner's full rights.
func (id Identity) HasScope(s string) bool {
	if len(id.Scopes) == 0 {
		return true
	}
	for _, have := range id.Scopes {
		if have == s {
			return true
		}
	}
	return false
}

// VerifyFunc asks the owner of the keys who holds key. It returns an apperr.Unauthorized error
// for a key that is unknown, revoked or belongs to an inactive user; any other error means the
// answer is not known.
type VerifyFunc func(ctx context.Context, key string) (Identity, error)

// UserService is the VerifyFunc backed by the user service's internal verify route.
func UserService(c *svcclient.Client) VerifyFunc {
	return func(ctx context.Context, key string) (Identity, error) {
		var id Identity
		err := c.Do(ctx, http.MethodPost, "/internal/auth/verify", struct {
			Key string `json:"key"`
		}{key}, &id)
		return id, err
	}
}

// The errors callers see. They never carry the user service's own wording or address.
var (
	errMissingKey = apperr.New(apperr.Unauthorized, "X-Api-Key: missing")
	errUnknownKey = apperr.New(apperr.Unauthorized, "X-Api-Key: unknown or revoked key")
)

// Options tune a Cache.
type Options struct {
	// TTL is how long a verified key is trusted without asking again (never past its ExpiresAt).
	TTL time.Duration
	// NegativeTTL is how long a refused key is refused without asking again; short, so that a
	// key issued a moment ago starts working at once, but long enough to absorb a flood of bad keys.
	NegativeTTL time.Duration
	// MaxEntries bounds the memory a flood of distinct keys can take.
	MaxEntries int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Hits and Misses count the cache's answers, Refusals the requests Require refuses by reason
	// (missing_key, unknown_key, user_unavailable); nil counts nothing.
	Hits, Misses prometheus.Counter
	Refusals     *prometheus.CounterVec
}

// KeyHash identifies an API key without holding it: the cache and the rate limiter key their
// maps by it so that raw keys never sit in memory longer than a request.
type KeyHash [sha256.Size]byte

// HashKey is the KeyHash of key.
func HashKey(key string) KeyHash { return sha256.Sum256([]byte(key)) }

// Cache verifies keys through a VerifyFunc, remembering answers and folding concurrent questions
// about one key into a single call.
type Cache struct {
	verify VerifyFunc
	opts   Options

	mu      sync.Mutex
	entries map[KeyHash]entry
	calls   singleflight.Group
}

type entry struct {
	v       *verified // nil: the key was refused
	expires time.Time
}

// verified is a key's owner as one cache entry holds it, with what every request of that key
// needs made once: the key's hash as a string (to key maps by) and the user id as header text.
// It is shared by those requests and never changed.
type verified struct {
	id         Identity
	keyHash    string
	userIDText string
	keyIDText  string
	scopesText string
}

func newVerified(id Identity, h KeyHash) *verified {
	return &verified{id: id, keyHash: string(h[:]), userIDText: strconv.FormatInt(id.UserID, 10),
		keyIDText: strconv.FormatInt(id.KeyID, 10), scopesText: strings.Join(id.Scopes, ",")}
}

// NewCache wraps verify with a cache.
func NewCache(verify VerifyFunc, opts Options) *Cache {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 100_000
	}
	return &Cache{verify: verify, opts: opts, entries: make(map[KeyHash]entry)}
}

func (c *Cache) verified(ctx context.Context, h KeyHash, key string) (*verified, error) {
	if e, ok := c.lookup(h); ok {
		count(c.opts.Hits)
		if e.v == nil {
			return nil, errUnknownKey
		}
		return e.v, nil
	}
	count(c.opts.Misses)
	v, err, _ := c.calls.Do(string(h[:]), func() (any, error) {
		// The call is shared by every request waiting on this key, so one caller hanging up
		// must not fail the others; the client's own timeout still bounds it.
		id, err := c.verify(context.WithoutCancel(ctx), key)
		switch {
		case err == nil:
			v := newVerified(id, h)
			ttl := c.opts.TTL
			if id.ExpiresAt != nil {
				// An expiring key is trusted up to its expiry, not a moment past it.
				ttl = min(ttl, id.ExpiresAt.Sub(c.opts.Now()))
			}
			c.store(h, entry{v: v}, ttl)
			return v, nil
		case apperr.KindOf(err) == apperr.Unauthorized:
			c.store(h, entry{}, c.opts.NegativeTTL)
			return nil, errUnknownKey
		default:
			return nil, apperr.Wrap(apperr.Unavailable, err, "authentication is unavailable: the user service did not answer")
		}
	})
	if err != nil {
		return nil, err
	}
	return v.(*verified), nil
}

func (c *Cache) lookup(h KeyHash) (entry, bool) {
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, found := c.entries[h]
	if !found {
		return entry{}, false
	}
	if !now.Before(e.expires) {
		delete(c.entries, h)
		return entry{}, false
	}
	return e, true
}

func (c *Cache) store(h KeyHash, e entry, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	now := c.opts.Now()
	e.expires = now.Add(ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.opts.MaxEntries {
		c.evict(now)
	}
	c.entries[h] = e
}

// evict drops expired entries and, if the map is still full, arbitrary ones: losing an entry
// only costs one more verify call.
func (c *Cache) evict(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < c.opts.MaxEntries {
			break
		}
		delete(c.entries, k)
	}
}

func count(c prometheus.Counter) {
	if c != nil {
		c.Inc()
	}
}

// refused counts a refusal of Require by reason.
func (c *Cache) refused(err error) {
	if c.opts.Refusals == nil {
		return
	}
	reason := "user_unavailable"
	switch err {
	case errMissingKey:
		reason = "missing_key"
	case errUnknownKey:
		reason = "unknown_key"
	}
	c.opts.Refusals.WithLabelValues(reason).Inc()
}
