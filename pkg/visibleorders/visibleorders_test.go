package visibleorders

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNarrow(t *testing.T) {
	all := Visible{All: true}
	ids, none := all.Narrow(nil)
	assert.Nil(t, ids)
	assert.False(t, none)
	ids, _ = all.Narrow([]int64{4})
	assert.Equal(t, []int64{4}, ids)

	mine := Visible{OrderIDs: []int64{1, 2}}
	ids, none = mine.Narrow(nil)
	assert.Equal(t, []int64{1, 2}, ids)
	assert.False(t, none)
	ids, none = mine.Narrow([]int64{2, 3})
	assert.Equal(t, []int64{2}, ids)
	assert.False(t, none)
	_, none = mine.Narrow([]int64{3})
	assert.True(t, none, "a filter naming only others' orders matches nothing")
	_, none = Visible{}.Narrow(nil)
	assert.True(t, none, "no order at all")
	assert.True(t, mine.Contains(1))
	assert.False(t, mine.Contains(3))
	assert.True(t, all.Contains(3))
}

// The order service is a stand-in here: what is tested is the client's caching and its request.
func TestResolverAsksOnceWithinTheTTL(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		assert.Equal(t, "/internal/order-scope", r.URL.Path)
		assert.Equal(t, "7", r.URL.Query().Get("userId"))
		assert.Equal(t, "client", r.URL.Query().Get("accessGroup"))
		_, _ = w.Write([]byte(`{"success":true,"message":"","data":{"all":false,"orderIds":[3,5]}}`))
	}))
	defer srv.Close()
	r := New(svcclient.New("order", srv.URL, "t", time.Second), time.Minute)
	clk := &clock{t: time.Now()}
	r.now = clk.Now
	caller := web.Caller{UserID: 7, AccessGroup: "client"}
	for range 3 {
		s, err := r.For(context.Background(), caller)
		require.NoError(t, err)
		assert.Equal(t, []int64{3, 5}, s.OrderIDs)
	}
	assert.Equal(t, int32(1), calls.Load())
	clk.Add(2 * time.Minute)
	_, err := r.For(context.Background(), caller)
	require.NoError(t, err)
	assert.Equal(t, int32(2), calls.Load(), "asked again once expired")
	r.Clear()
	_, err = r.For(context.Background(), caller)
	require.NoError(t, err)
	assert.Equal(t, int32(3), calls.Load(), "asked again once cleared")

	for _, c := range []web.Caller{{}, {UserID: 1, AccessGroup: "admin"}, {UserID: 2, AccessGroup: "arbitration"}} {
		s, err := r.For(context.Background(), c)
		require.NoError(t, err)
		assert.True(t, s.All, "%+v: sees every order without asking", c)
	}
	assert.Equal(t, int32(3), calls.Load())
}

func TestShowsContacts(t *testing.T) {
	s := Visible{OrderIDs: []int64{1, 2}, HiddenContacts: []int64{2}}
	assert.True(t, s.ShowsContacts(1))
	assert.False(t, s.ShowsContacts(2), "the order hides contacts from agents")
	assert.False(t, s.ShowsContacts(3), "outside the scope")
	assert.True(t, Visible{All: true}.ShowsContacts(3))
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// orderService stands in for the order service's scope route: it answers the orders it holds at
// the moment it is asked, and counts the questions.
type orderService struct {
	*httptest.Server
	calls atomic.Int32
	mu    sync.Mutex
	ids   []int64
	// hold, when set, keeps each answer until it is closed.
	hold chan struct{}
}

func newOrderService(t *testing.T, ids ...int64) *orderService {
	o := &orderService{ids: ids}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		o.calls.Add(1)
		o.mu.Lock()
		body, _ := json.Marshal(map[string]any{"success": true, "message": "", "data": Visible{OrderIDs: o.ids}})
		hold := o.hold
		o.mu.Unlock()
		if hold != nil {
			<-hold
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(o.Close)
	return o
}

// assign gives the caller order id (an order created, an agent assigned).
func (o *orderService) assign(id int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ids = append(o.ids, id)
}

func newResolver(o *orderService, clk *clock) *Resolver {
	r := New(svcclient.New("order", o.URL, "t", 5*time.Second), DefaultTTL)
	r.now = clk.Now
	return r
}

var client = web.Caller{UserID: 7, AccessGroup: "client"}

func TestVisibleOrdersAreCachedAtMostOneSecond(t *testing.T) {
	assert.LessOrEqual(t, DefaultTTL, time.Second)
}

// A scope that contains the order answers yes without asking; one that does not is never the
// answer: the order service is asked again first (the order was created a moment ago).
func TestCheckAsksAgainOnAMiss(t *testing.T) {
	o, clk := newOrderService(t, 3), &clock{t: time.Unix(1000, 0)}
	r := newResolver(o, clk)
	ctx := context.Background()

	s, err := r.For(ctx, client) // the client listed its leads: its scope is cached
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, s.OrderIDs)
	o.assign(5) // then it created order 5
	clk.Add(10 * time.Millisecond)

	_, ok, err := r.Check(ctx, client, 3)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, int32(1), o.calls.Load(), "a hit within the TTL asks nothing")

	s, ok, err = r.Check(ctx, client, 5)
	require.NoError(t, err)
	assert.True(t, ok, "the cached scope misses order 5: asked again, it is there")
	assert.Equal(t, []int64{3, 5}, s.OrderIDs)
	assert.Equal(t, int32(2), o.calls.Load())
	_, ok, _ = r.Check(ctx, client, 5)
	assert.True(t, ok)
	assert.Equal(t, int32(2), o.calls.Load(), "and kept")

	for range 2 {
		clk.Add(10 * time.Millisecond)
		_, ok, err = r.Check(ctx, client, 9)
		require.NoError(t, err)
		assert.False(t, ok)
	}
	assert.Equal(t, int32(4), o.calls.Load(), "every no is the order service's")

	clk.Add(DefaultTTL)
	_, ok, _ = r.Check(ctx, client, 3)
	assert.True(t, ok)
	assert.Equal(t, int32(5), o.calls.Load(), "a yes is trusted for the TTL only")
}

// A list asks every time, so that it holds an order created just before.
func TestFreshAsksEveryTime(t *testing.T) {
	o, clk := newOrderService(t, 3), &clock{t: time.Unix(1000, 0)}
	r := newResolver(o, clk)
	ctx := context.Background()
	_, err := r.For(ctx, client)
	require.NoError(t, err)
	o.assign(5)
	clk.Add(10 * time.Millisecond)
	s, err := r.Fresh(ctx, client)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 5}, s.OrderIDs)
	assert.Equal(t, int32(2), o.calls.Load())
	s, err = r.For(ctx, client)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 5}, s.OrderIDs, "the fresh answer is cached")
	assert.Equal(t, int32(2), o.calls.Load())
}

// Questions about one caller asked while a call is in flight share it, or the one after it when
// they need an answer newer than its start.
func TestConcurrentQuestionsShareACall(t *testing.T) {
	o, clk := newOrderService(t, 3), &clock{t: time.Unix(1000, 0)}
	o.hold = make(chan struct{})
	r := newResolver(o, clk)
	ctx := context.Background()
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, ok, err := r.Check(ctx, client, 3)
			assert.NoError(t, err)
			assert.True(t, ok)
		})
	}
	require.Eventually(t, func() bool { return o.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	// These arrive while the first call is in flight, a moment after it started: it may predate
	// what they need. The clock stands still from here, so one more call serves them all,
	// however late the scheduler starts them.
	clk.Add(time.Millisecond)
	for range n {
		wg.Go(func() {
			_, err := r.Fresh(ctx, client)
			assert.NoError(t, err)
		})
	}
	o.mu.Lock()
	close(o.hold)
	o.hold = nil
	o.mu.Unlock()
	wg.Wait()
	assert.Equal(t, int32(2), o.calls.Load(), "%d questions, one call in flight and one after it", 2*n)
}

// The fan-out handles an event some time after it happened: a scope read after the event may say
// no, one read before it must be read again first; and a batch costs one call per owner however
// many of its events miss.
func TestCheckAsOfAnEvent(t *testing.T) {
	o, clk := newOrderService(t, 3), &clock{t: time.Unix(1000, 0)}
	r := newResolver(o, clk)
	ctx := context.Background()
	_, err := r.For(ctx, client) // read at 1000
	require.NoError(t, err)
	o.assign(5)
	clk.Add(300 * time.Millisecond)

	_, ok, err := r.CheckAsOf(ctx, client, 9, time.Unix(999, 0))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, int32(1), o.calls.Load(), "read after the event: its no stands")

	_, ok, err = r.CheckAsOf(ctx, client, 5, time.Unix(1000, 200_000_000))
	require.NoError(t, err)
	assert.True(t, ok, "read before the event (order 5 created just before it): read again")
	assert.Equal(t, int32(2), o.calls.Load())

	received := clk.Now()
	for i := range 50 {
		asOf := EventAsOf("1970-01-01T00:16:40+00:00", received) // events stamped 1000
		_, ok, err = r.CheckAsOf(ctx, client, int64(100+i), asOf)
		require.NoError(t, err)
		assert.False(t, ok)
	}
	assert.Equal(t, int32(2), o.calls.Load(), "the scope read for this batch answers every miss in it")
	clk.Add(10 * time.Millisecond)
	_, ok, _ = r.CheckAsOf(ctx, client, 100, EventAsOf("1970-01-01T00:16:40+00:00", clk.Now()))
	assert.False(t, ok)
	assert.Equal(t, int32(3), o.calls.Load(), "the next batch's event may be newer than that read: one more call")
}

func TestEventAsOf(t *testing.T) {
	received := time.Date(2026, 11, 21, 10, 0, 10, 0, time.UTC)
	assert.WithinDuration(t, time.Date(2026, 11, 21, 10, 0, 1, 500_000_000, time.UTC),
		EventAsOf("2026-11-21T10:00:00+00:00", received), 0, "stamped in whole seconds, from another clock")
	assert.Equal(t, received, EventAsOf("2026-11-21T10:00:09+00:00", received), "never after the event was received")
	assert.Equal(t, received, EventAsOf("not a time", received))
}

// A question about a moment still ahead of this clock (a margin for another clock) is answered by
// one read started now, not by reading again until the moment comes.
func TestCheckAsOfAheadOfTheClock(t *testing.T) {
	o, clk := newOrderService(t, 3), &clock{t: time.Unix(1000, 0)}
	r := newResolver(o, clk)
	_, ok, err := r.CheckAsOf(context.Background(), client, 9, time.Unix(1001, 0))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, int32(1), o.calls.Load())
}

// The cost of a check answered by the cache (a yes within the TTL), and of one that asks the
// order service (a stand-in over loopback: the client's share, not the order service's query).
func BenchmarkCheck(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"success":true,"message":"","data":{"all":false,"orderIds":[3,5]}}`))
	}))
	defer srv.Close()
	r := New(svcclient.New("order", srv.URL, "t", time.Second), time.Hour)
	ctx := context.Background()
	b.Run("hit", func(b *testing.B) {
		for b.Loop() {
			if _, ok, err := r.Check(ctx, client, 3); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Fresh(ctx, client); err != nil {
				b.Fatal(err)
			}
		}
	})
}
