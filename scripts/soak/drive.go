package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"ccplatform/gateway/e2e/stacktest"
)

// op is one request of the mix: the operation it sends (its operationId), the bad input it carries
// ("" for a valid request), and its weight (out of the sum of every op's).
type op struct {
	id     string
	bad    string
	weight float64
	run    func(m *mix, ctx context.Context)
}

// drive sends requests at rate until ctx ends, each on the first free worker, and waits for the
// last ones. While paused it sends nothing and does not catch up afterwards.
func (m *mix) drive(ctx context.Context, rate, workers int) {
	var total float64
	for _, o := range m.ops {
		total += o.weight
	}
	queue := make(chan op)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range queue {
				// The request may end after the window: it is measured all the same.
				o.run(m, context.WithoutCancel(ctx))
				m.inflight.Add(-1)
			}
		})
	}
	defer wg.Wait()
	defer close(queue)
	start := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	sent := 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			due := int(now.Sub(start).Seconds()*float64(rate)) - sent
			if m.paused.Load() {
				sent += due
				continue
			}
			for ; due > 0; due-- {
				sent++
				m.inflight.Add(1)
				select {
				case queue <- m.pick(total):
				default:
					m.inflight.Add(-1)
					m.rec.late()
				}
			}
		}
	}
}

func (m *mix) pick(total float64) op {
	x := rand.Float64() * total
	for _, o := range m.ops {
		if x < o.weight {
			return o
		}
		x -= o.weight
	}
	return m.ops[len(m.ops)-1]
}

// quiet stops the load until resume and waits for the requests in flight, then closes the
// client's idle connections (the gateway holds a goroutine for each): a sample taken meanwhile
// counts the processes' own goroutines and memory, not the requests of that moment.
func (m *mix) quiet() {
	m.paused.Store(true)
	for deadline := time.Now().Add(10 * time.Second); m.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	m.hc.CloseIdleConnections()
}

func (m *mix) resume() { m.paused.Store(false) }

// publishCalls plays the telephony platform every so often: 20 call events for a demo order's
// leads through `ccadmin simulate-calls`, which call-ingest stores (and lead-worker reads back as
// call results).
func (m *mix) publishCalls(ctx context.Context, st *stacktest.Stack, every time.Duration) {
	// Half a period off the window, so a batch is never in flight while a sample is taken.
	next := time.NewTimer(every / 2)
	defer next.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-next.C:
			next.Reset(every)
		}
		if m.paused.Load() {
			continue
		}
		order := m.callOrders[i%len(m.callOrders)]
		if _, err := st.CCAdmin("simulate-calls", "--order", strconv.Itoa(order), "--count", "20"); err != nil {
			m.callErrors.Add(1)
			fmt.Println("soak: call events:", err)
		}
	}
}

// ring keeps the latest ids of a kind for the mix to pick from.
type ring[T comparable] struct {
	mu   sync.Mutex
	ids  []T
	next int
}

const ringSize = 1000

func newRing[T comparable]() *ring[T] { return &ring[T]{ids: make([]T, 0, ringSize)} }

func (r *ring[T]) add(id T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) < ringSize {
		r.ids = append(r.ids, id)
		return
	}
	r.ids[r.next] = id
	r.next = (r.next + 1) % ringSize
}

// pick is a random id of the ring, the zero value when it is empty.
func (r *ring[T]) pick() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var zero T
	if len(r.ids) == 0 {
		return zero
	}
	return r.ids[rand.IntN(len(r.ids))]
}

// queue holds ids the mix made and gives back the oldest: what it made is removed again (API keys,
// leases, webhooks, do-not-call entries), so nothing piles up over a long run.
type queue[T any] struct {
	mu  sync.Mutex
	ids []T
}

func (q *queue[T]) push(id T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids = append(q.ids, id)
}

// pop is the oldest id while more than keep are held.
func (q *queue[T]) pop(keep int) (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if len(q.ids) <= keep {
		return zero, false
	}
	id := q.ids[0]
	q.ids = q.ids[1:]
	return id, true
}

// peek is a random id held, false when none is.
func (q *queue[T]) peek() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if len(q.ids) == 0 {
		return zero, false
	}
	return q.ids[rand.IntN(len(q.ids))], true
}
