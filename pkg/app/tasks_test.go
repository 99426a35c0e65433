package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The work stops first and the background keeps running until it has; Run returns once all have.
func TestTasksStopWorkThenBackground(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	var tasks Tasks
	tasks.Background("relay", func(ctx context.Context) error {
		<-ctx.Done()
		note("relay stopped")
		return nil
	})
	tasks.Work("http", func(ctx context.Context) error {
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // draining
		note("http drained")
		return nil
	})
	tasks.Background("purge", Every(func(ctx context.Context) { <-ctx.Done(); note("purge stopped") }))
	go cancel()
	assert.NoError(t, tasks.Run(ctx))
	assert.Equal(t, "http drained", order[0])
	assert.ElementsMatch(t, []string{"http drained", "relay stopped", "purge stopped"}, order)
}

// A failing task stops the rest, and its error, named, is Run's.
func TestTasksFailureStopsTheRest(t *testing.T) {
	boom := errors.New("boom")
	var tasks Tasks
	tasks.Work("consumer", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	tasks.Background("relay", func(context.Context) error { return boom })
	err := tasks.Run(context.Background())
	assert.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "relay: boom")
}
