package live

import (
	"sync"
)

// streamBuffer is how many messages may wait for one slow stream before it is dropped.
const streamBuffer = 64

// Hub holds the open streams of this process, by user.
type Hub struct {
	mu      sync.Mutex
	streams map[int64]map[*Subscription]struct{}
	closed  bool
}

// NewHub is an empty hub.
func NewHub() *Hub { return &Hub{streams: map[int64]map[*Subscription]struct{}{}} }

// Subscription is one open stream.
type Subscription struct {
	userID int64
	hub    *Hub
	ch     chan Message
	done   chan struct{}
	once   sync.Once
}

// Messages delivers the user's notifications.
func (s *Subscription) Messages() <-chan Message { return s.ch }

// Done is closed when the stream must end: the hub is shutting down, or the stream fell too far
// behind.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Close leaves the hub.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.remove(s)
}

func (s *Subscription) end() { s.once.Do(func() { close(s.done) }) }

// Subscribe opens a stream for user; after Close of the hub it is ended at once.
func (h *Hub) Subscribe(userID int64) *Subscription {
	s := &Subscription{userID: userID, hub: h, ch: make(chan Message, streamBuffer), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.end()
		return s
	}
	if h.streams[userID] == nil {
		h.streams[userID] = map[*Subscription]struct{}{}
	}
	h.streams[userID][s] = struct{}{}
	return s
}

// remove drops s; h.mu is held.
func (h *Hub) remove(s *Subscription) {
	set := h.streams[s.userID]
	delete(set, s)
	if len(set) == 0 {
		delete(h.streams, s.userID)
	}
	s.end()
}

// Push hands m to every open stream of user and reports how many got it. A stream too far behind
// to take it is ended (its client reconnects and reads the inbox) rather than slowing the others.
func (h *Hub) Push(userID int64, m Message) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for s := range h.streams[userID] {
		select {
		case s.ch <- m:
			n++
		default:
			h.remove(s)
		}
	}
	return n
}

// Online reports whether user has an open stream in this process.
func (h *Hub) Online(userID int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams[userID]) > 0
}

// Close ends every stream, for shutdown: the server can only drain once they are gone.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, set := range h.streams {
		for s := range set {
			s.end()
		}
	}
	h.streams = map[int64]map[*Subscription]struct{}{}
}
