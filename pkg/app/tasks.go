package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"ccplatform/pkg/httpserver"

	"go.uber.org/zap"
)

// Tasks are the long-running parts of one process, registered by its run function and run, then
// joined, by Run. Every binary has the same shutdown order:
//
//  1. SIGTERM: /readyz answers 503 at once, and DRAIN_DELAY later run's context ends (Main);
//  2. the Work tasks (the HTTP server, the queue consumers) stop taking work and finish what they
//     hold: the server drains its requests, a consumer acks or requeues its deliveries;
//  3. then the Background tasks stop (an outbox relay, a cache-invalidation consumer, a periodic
//     purge): they serve the work, so they keep running while it drains;
//  4. Run returns, and run's deferred closes release publishers, the broker and the database, in
//     the reverse order of their opening.
//
// A task that fails ends the process the same way, and its error is Run's.
type Tasks struct {
	work, background []task
}

type task struct {
	name string
	run  func(ctx context.Context) error
}

// Work adds a task that takes work in; it stops first.
func (t *Tasks) Work(name string, run func(ctx context.Context) error) {
	t.work = append(t.work, task{name, run})
}

// Background adds a task that serves the work; it stops after every Work task has returned.
func (t *Tasks) Background(name string, run func(ctx context.Context) error) {
	t.background = append(t.background, task{name, run})
}

// HTTP adds the server of h on addr (httpserver.ListenAndServe, httpserver.DefaultTimeouts) as the Work task
// "http": on shutdown it stops accepting and drains the requests in flight.
func (t *Tasks) HTTP(addr string, h http.Handler, log *zap.Logger) {
	t.Work("http", func(ctx context.Context) error {
		return httpserver.ListenAndServe(ctx, addr, h, httpserver.DefaultTimeouts, log)
	})
}

// Every turns a periodic job (a function that loops until its context ends) into a task.
func Every(job func(ctx context.Context)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		job(ctx)
		return nil
	}
}

// Run runs every task until ctx ends or one fails, stops them in the order above, and returns the
// first failure. A task's context error after the stop is not a failure.
func (t *Tasks) Run(ctx context.Context) error {
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	backgroundCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBackground()

	var (
		mu    sync.Mutex
		first error
	)
	done := func(tk task, err error) {
		if err == nil || (errors.Is(err, context.Canceled) && workCtx.Err() != nil) {
			return
		}
		mu.Lock()
		if first == nil {
			first = fmt.Errorf("%s: %w", tk.name, err)
		}
		mu.Unlock()
		stopWork()
	}
	var background, work sync.WaitGroup
	for _, tk := range t.background {
		background.Go(func() { done(tk, tk.run(backgroundCtx)) })
	}
	for _, tk := range t.work {
		work.Go(func() { done(tk, tk.run(workCtx)) })
	}
	work.Wait()
	stopBackground()
	background.Wait()
	return first
}

// Sleep waits d, or less when ctx ends first: the pause of a loop that must stop at once on
// shutdown.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
