package mq

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// subscriptions count, per queue, the consumers this connection runs: how many Consume asked for
// and how many are subscribed now, and since when each worker holds the deliveries in its hands.
// Readiness and the mq_consumers and mq_oldest_unacked_seconds metrics read them.
type subscriptions struct {
	mu     sync.Mutex
	queues map[string]*subscription
}

type subscription struct {
	wanted atomic.Int64
	active atomic.Int64
	// bound is the longest MaxUnackedAge its consumers were given, in nanoseconds.
	bound atomic.Int64

	mu sync.Mutex
	// since maps each worker holding unacked deliveries to when the oldest of them arrived.
	since map[*worker]time.Time
}

// hold records that w holds deliveries since at (the arrival of the oldest); release that it holds
// none any more.
func (s *subscription) hold(w *worker, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.since == nil {
		s.since = map[*worker]time.Time{}
	}
	s.since[w] = at
}

func (s *subscription) release(w *worker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.since, w)
}

// oldest is how long the oldest delivery any worker holds has been unacked at now (0: none).
func (s *subscription) oldest(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var age time.Duration
	for _, at := range s.since {
		age = max(age, now.Sub(at))
	}
	return age
}

func (s *subscription) setBound(d time.Duration) {
	for {
		cur := s.bound.Load()
		if int64(d) <= cur || s.bound.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

func (s *subscriptions) of(queue string) *subscription {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues == nil {
		s.queues = map[string]*subscription{}
	}
	q, ok := s.queues[queue]
	if !ok {
		q = &subscription{}
		s.queues[queue] = q
	}
	return q
}

// QueueSubscription is one queue's consumers on this connection.
type QueueSubscription struct {
	Queue          string
	Wanted, Active int
	// OldestUnacked is how long the oldest delivery its consumers hold has waited for its ack (0
	// when they hold none); MaxUnackedAge is the bound past which they are stalled.
	OldestUnacked, MaxUnackedAge time.Duration
}

// Stalled reports whether a delivery has been held unacked longer than the bound.
func (q QueueSubscription) Stalled() bool {
	return q.MaxUnackedAge > 0 && q.OldestUnacked > q.MaxUnackedAge
}

// Subscriptions lists every queue this connection consumes (or was asked to), sorted by name.
func (c *Conn) Subscriptions() []QueueSubscription {
	now := time.Now()
	c.subs.mu.Lock()
	out := make([]QueueSubscription, 0, len(c.subs.queues))
	for name, q := range c.subs.queues {
		out = append(out, QueueSubscription{Queue: name, Wanted: int(q.wanted.Load()), Active: int(q.active.Load()),
			OldestUnacked: q.oldest(now), MaxUnackedAge: time.Duration(q.bound.Load())})
	}
	c.subs.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out
}

// ConsumersReady is nil when every consumer that Consume started is subscribed, else it names the
// queues short of consumers. A process whose consumers are down is not doing its work even when
// its connection is up (a deleted queue, a channel refused by the broker).
func (c *Conn) ConsumersReady() error {
	var short []string
	for _, s := range c.Subscriptions() {
		if s.Active < s.Wanted {
			short = append(short, fmt.Sprintf("%s %d/%d", s.Queue, s.Active, s.Wanted))
		}
	}
	if len(short) > 0 {
		return fmt.Errorf("consumers not subscribed: %s", strings.Join(short, ", "))
	}
	return nil
}

// DeliveriesFlowing is nil unless a consumer has held a delivery unacked for longer than its
// MaxUnackedAge; then it names the queues and their oldest delivery's age. Such a consumer is
// subscribed and its process up, yet its work is stuck (a message retried without end), and every
// message behind it waits: the process is degraded.
func (c *Conn) DeliveriesFlowing() error {
	var stalled []string
	for _, s := range c.Subscriptions() {
		if s.Stalled() {
			stalled = append(stalled, fmt.Sprintf("%s: oldest unacked delivery %s old (bound %s)",
				s.Queue, s.OldestUnacked.Truncate(time.Second), s.MaxUnackedAge))
		}
	}
	if len(stalled) > 0 {
		return fmt.Errorf("stalled: %s", strings.Join(stalled, ", "))
	}
	return nil
}
