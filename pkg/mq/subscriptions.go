package mq

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// subscriptions count, per queue, the consumers this connection runs: how many Consume asked for
// and how many are subscribed now. Readiness and the mq_consumers metric read them.
type subscriptions struct {
	mu     sync.Mutex
	queues map[string]*subscription
}

type subscription struct {
	wanted atomic.Int64
	active atomic.Int64
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
}

// Subscriptions lists every queue this connection consumes (or was asked to), sorted by name.
func (c *Conn) Subscriptions() []QueueSubscription {
	c.subs.mu.Lock()
	out := make([]QueueSubscription, 0, len(c.subs.queues))
	for name, q := range c.subs.queues {
		out = append(out, QueueSubscription{Queue: name, Wanted: int(q.wanted.Load()), Active: int(q.active.Load())})
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
