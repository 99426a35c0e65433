// Package ratelimit keeps each API key to a token-bucket rate, so that one noisy client cannot
// starve the others. Buckets live in a bounded map and expire once idle.
package ratelimit

import (
	"math"
	"strconv"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// Options tune a Limiter.
type Options struct {
	// RPS is the sustained rate per key; <= 0 turns limiting off.
	RPS float64
	// Burst is how many requests a key may send at once after being quiet.
	Burst int
	// MaxKeys bounds the memory a flood of distinct keys can take.
	MaxKeys int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rejections counts the 429 answers of Middleware and FailedAuth; nil counts nothing.
	Rejections prometheus.Counter
}

// Limiter holds one token bucket per key.
type Limiter struct {
	opts Options
	// idle is how long a bucket may go unused before it is dropped. It is at least the time a
	// bucket takes to refill completely, so dropping one never hands a client extra tokens.
	idle time.Duration

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New is a Limiter with opts.
func New(opts Options) *Limiter {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 100_000
	}
	if opts.Burst < 1 {
		opts.Burst = 1
	}
	idle := 10 * time.Second
	if opts.RPS > 0 {
		if refill := time.Duration(float64(opts.Burst) / opts.RPS * float64(time.Second)); refill > idle {
			idle = refill
		}
	}
	return &Limiter{opts: opts, idle: idle, buckets: make(map[string]*bucket), lastSweep: opts.Now()}
}

// Allow takes a token for key. When none is left it reports how long until one will be.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	d := l.Take(key)
	return d.OK, d.RetryAfter
}

// Decision is what Take decided for one request, with what the rate-limit headers tell a client.
type Decision struct {
	OK         bool
	RetryAfter time.Duration
	// Remaining is the whole tokens left after this request; Reset is how long until the bucket
	// is full again.
	Remaining int
	Reset     time.Duration
}

// Take is Allow with the state of key's bucket after it.
func (l *Limiter) Take(key string) Decision {
	if l.opts.RPS <= 0 {
		return Decision{OK: true, Remaining: l.opts.Burst}
	}
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= l.idle {
		l.sweep(now)
	}
	b, found := l.buckets[key]
	if !found {
		if len(l.buckets) >= l.opts.MaxKeys {
			l.evict(now)
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.opts.RPS), l.opts.Burst)}
		l.buckets[key] = b
	}
	b.seen = now
	d := Decision{OK: true}
	// The common case takes its token without the Reservation that ReserveN allocates; AllowN
	// leaves the bucket untouched when it says no, so the reservation below sees the same state.
	if !b.lim.AllowN(now, 1) {
		r := b.lim.ReserveN(now, 1)
		switch {
		case !r.OK():
			d = Decision{RetryAfter: time.Second}
		case r.DelayFrom(now) > 0:
			d = Decision{RetryAfter: r.DelayFrom(now)}
			r.CancelAt(now)
		}
	}
	tokens := max(b.lim.TokensAt(now), 0)
	d.Remaining = int(tokens)
	d.Reset = time.Duration((float64(l.opts.Burst) - tokens) / l.opts.RPS * float64(time.Second))
	return d
}

// Len is the number of buckets held.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.seen) >= l.idle {
			delete(l.buckets, k)
		}
	}
	l.lastSweep = now
}

// evict makes room for a new key: idle buckets first, then arbitrary ones (which may let those
// keys burst again; the bound on memory matters more).
func (l *Limiter) evict(now time.Time) {
	l.sweep(now)
	for k := range l.buckets {
		if len(l.buckets) < l.opts.MaxKeys {
			break
		}
		delete(l.buckets, k)
	}
}

// Middleware answers 429 with Retry-After (whole seconds, at least 1) once keyOf's key is over its
// rate. Requests whose key is "" pass: they were not authenticated and are refused elsewhere.
func Middleware(l *Limiter, keyOf func(*gin.Context) string) gin.HandlerFunc {
	return func(c *gin.Context) {
		key := keyOf(c)
		if key == "" {
			c.Next()
			return
		}
		d := l.Take(key)
		if l.opts.RPS > 0 {
			// The IETF draft's names (draft-ietf-httpapi-ratelimit-headers): the bucket's size,
			// the requests left in it, and the seconds until it is full again.
			h := c.Writer.Header()
			h.Set("RateLimit-Limit", strconv.Itoa(l.opts.Burst))
			h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
			h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil(d.Reset.Seconds()))))
		}
		ok, wait := d.OK, d.RetryAfter
		if !ok {
			l.rejected()
			c.Header("Retry-After", strconv.Itoa(RetryAfterSeconds(wait)))
			web.Fail(c, apperr.New(apperr.RateLimited, "too many requests: the limit is %g per second per API key", l.opts.RPS))
			return
		}
		c.Next()
	}
}

// RetryAfterSeconds rounds a wait up to whole seconds, never below 1, as Retry-After needs.
func RetryAfterSeconds(wait time.Duration) int {
	s := int(math.Ceil(wait.Seconds()))
	if s < 1 {
		return 1
	}
	return s
}

func (l *Limiter) rejected() {
	if l.opts.Rejections != nil {
		l.opts.Rejections.Inc()
	}
}
