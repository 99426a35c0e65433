package ratelimit

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// Peek reports whether key would be allowed now, without taking a token; retryAfter is how long
// until it would be.
func (l *Limiter) Peek(key string) (ok bool, retryAfter time.Duration) {
	if l.opts.RPS <= 0 {
		return true, 0
	}
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, found := l.buckets[key]
	if !found {
		return true, 0
	}
	tokens := b.lim.TokensAt(now)
	if tokens >= 1 {
		return true, 0
	}
	return false, time.Duration((1 - tokens) / l.opts.RPS * float64(time.Second))
}

// FailedAuth limits the requests refused with 401 per client address: each such refusal spends a
// token of the address's bucket, and an address with none left is answered 429 before its key is
// looked at, so a flood of guessed keys costs the user service nothing. The address is the TCP
// peer's (c.RemoteIP): X-Forwarded-For is the client's own word.
func FailedAuth(l *Limiter) gin.HandlerFunc {
	return func(c *gin.Context) {
		ip := c.RemoteIP()
		if ok, wait := l.Peek(ip); !ok {
			l.rejected()
			c.Header("Retry-After", strconv.Itoa(RetryAfterSeconds(wait)))
			web.Fail(c, apperr.New(apperr.RateLimited, "too many requests with a missing or unknown X-Api-Key from this address"))
			return
		}
		c.Next()
		if c.Writer.Status() == http.StatusUnauthorized {
			l.Allow(ip)
		}
	}
}

// Streams bounds the live streams (server-sent events) one API key holds open at once: each holds
// a connection and a goroutine in the gateway and the service for as long as it lasts.
type Streams struct {
	// Rejections counts the streams refused; nil counts nothing.
	Rejections prometheus.Counter

	max  int
	mu   sync.Mutex
	open map[string]int
}

// NewStreams allows max streams per key; max <= 0 means no bound.
func NewStreams(max int) *Streams { return &Streams{max: max, open: map[string]int{}} }

// acquire takes a slot for key, reporting false when key holds max already.
func (s *Streams) acquire(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max > 0 && s.open[key] >= s.max {
		return false
	}
	s.open[key]++
	return true
}

func (s *Streams) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key]--; s.open[key] <= 0 {
		delete(s.open, key)
	}
}

// Open is how many streams key holds.
func (s *Streams) Open(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[key]
}

// Middleware answers 429 (Retry-After: 5) when keyOf's key already holds its streams, and frees
// the slot when the stream ends.
func (s *Streams) Middleware(keyOf func(*gin.Context) string) gin.HandlerFunc {
	return func(c *gin.Context) {
		key := keyOf(c)
		if !s.acquire(key) {
			if s.Rejections != nil {
				s.Rejections.Inc()
			}
			c.Header("Retry-After", "5")
			web.Fail(c, apperr.New(apperr.RateLimited, "too many live streams: at most %d at once per API key", s.max))
			return
		}
		defer s.release(key)
		c.Next()
	}
}
