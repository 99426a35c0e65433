package live

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Hub takes one snapshot per tick while anyone subscribes, and tells every subscriber of it.
type Hub struct {
	take func(ctx context.Context) (*Snapshot, error)
	tick time.Duration
	log  *zap.Logger

	mu      sync.Mutex
	subs    int
	current *Snapshot
	// next is closed when a snapshot newer than current is taken (then replaced).
	next chan struct{}
	// wake starts a tick at once when the first subscriber arrives.
	wake   chan struct{}
	closed chan struct{}
	once   sync.Once
}

// NewHub takes snapshots with take every tick.
func NewHub(take func(ctx context.Context) (*Snapshot, error), tick time.Duration, log *zap.Logger) *Hub {
	return &Hub{take: take, tick: tick, log: log, next: make(chan struct{}), wake: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Run takes the snapshots until ctx ends. A snapshot that cannot be taken (the lead service
// down) leaves the last one in place: the streams repeat it, and its at tells how old it is.
func (h *Hub) Run(ctx context.Context) error {
	t := time.NewTicker(h.tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.closed:
			return nil
		case <-t.C:
		case <-h.wake:
		}
		h.mu.Lock()
		idle := h.subs == 0
		h.mu.Unlock()
		if idle {
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, h.tick*3)
		s, err := h.take(tctx)
		cancel()
		if err != nil {
			h.log.Warn("live snapshot", zap.Error(err))
			continue
		}
		h.mu.Lock()
		h.current = s
		close(h.next)
		h.next = make(chan struct{})
		h.mu.Unlock()
	}
}

// Subscribe counts a stream in; the returned func counts it out.
func (h *Hub) Subscribe() (leave func()) {
	h.mu.Lock()
	h.subs++
	first := h.subs == 1
	if first {
		// Taken before the hub went idle: too old to show.
		h.current = nil
	}
	h.mu.Unlock()
	if first {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.subs--
			h.mu.Unlock()
		})
	}
}

// Streams is how many streams are open (the report_live_streams gauge).
func (h *Hub) Streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subs
}

// Current is the latest snapshot (nil before the first) and a channel closed when a newer one
// is taken.
func (h *Hub) Current() (*Snapshot, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.current, h.next
}

// Done is closed when the hub closes: every stream must end (the server is shutting down).
func (h *Hub) Done() <-chan struct{} { return h.closed }

// Close ends every stream and the snapshots.
func (h *Hub) Close() { h.once.Do(func() { close(h.closed) }) }
