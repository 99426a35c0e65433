package ratelimit

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestBurstThenRate(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	l := New(Options{RPS: 2, Burst: 3, Now: clk.Now})
	for i := range 3 {
		ok, _ := l.Allow("a")
		assert.True(t, ok, "request %d within the burst", i)
	}
	ok, wait := l.Allow("a")
	assert.False(t, ok)
	assert.Equal(t, 500*time.Millisecond, wait)

	ok, _ = l.Allow("b")
	assert.True(t, ok, "keys are independent")

	clk.now = clk.now.Add(500 * time.Millisecond)
	ok, _ = l.Allow("a")
	assert.True(t, ok, "one token back after 1/RPS")
	ok, _ = l.Allow("a")
	assert.False(t, ok, "a refused request does not consume a token for later")
}

func TestIdleBucketsExpire(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	l := New(Options{RPS: 10, Burst: 10, Now: clk.Now})
	for i := range 50 {
		l.Allow(fmt.Sprint("k", i))
	}
	assert.Equal(t, 50, l.Len())
	clk.now = clk.now.Add(time.Minute)
	l.Allow("fresh")
	assert.Equal(t, 1, l.Len())
}

func TestMapIsBounded(t *testing.T) {
	l := New(Options{RPS: 1, Burst: 1, MaxKeys: 100})
	for i := range 1000 {
		l.Allow(fmt.Sprint("k", i))
	}
	assert.LessOrEqual(t, l.Len(), 100)
}

func TestDisabled(t *testing.T) {
	l := New(Options{RPS: 0})
	for range 1000 {
		ok, _ := l.Allow("a")
		require.True(t, ok)
	}
	assert.Zero(t, l.Len())
}

func TestRetryAfterSeconds(t *testing.T) {
	assert.Equal(t, 1, RetryAfterSeconds(0))
	assert.Equal(t, 1, RetryAfterSeconds(5*time.Millisecond))
	assert.Equal(t, 1, RetryAfterSeconds(time.Second))
	assert.Equal(t, 2, RetryAfterSeconds(1001*time.Millisecond))
}

func TestMiddleware(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	l := New(Options{RPS: 0.5, Burst: 2})
	e.Use(Middleware(l, func(c *gin.Context) string { return c.GetHeader("K") }))
	e.GET("/", func(c *gin.Context) { c.Status(http.StatusNoContent) })

	do := func(key string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("K", key)
		e.ServeHTTP(w, r)
		return w
	}
	assert.Equal(t, http.StatusNoContent, do("a").Code)
	assert.Equal(t, http.StatusNoContent, do("a").Code)
	w := do("a")
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "2", w.Header().Get("Retry-After"))
	assert.JSONEq(t, `{"success":false,"message":"too many requests: the limit is 0.5 per second per API key","data":[]}`, w.Body.String())
	assert.Equal(t, http.StatusNoContent, do("").Code, "no key: not limited here")
}
