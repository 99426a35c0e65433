package app

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sink []byte

// A burst of allocations is followed by a release once the process is quiet, and the next burst by
// another; a quiet process is left alone. (A check that falls in a burst while the machine starves
// the burst's goroutine may release early too: harmless, so not counted against it.)
func TestReleaseAfterBursts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	released := make(chan struct{}, 10)
	go releaseAfterBursts(ctx, 20*time.Millisecond, 4<<20, func() { released <- struct{}{} })

	burst := func() {
		for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
			sink = make([]byte, 4<<20)
		}
	}
	quietFor := func(d time.Duration) int {
		n := 0
		for deadline := time.After(d); ; {
			select {
			case <-released:
				n++
			case <-deadline:
				return n
			}
		}
	}
	require.Zero(t, quietFor(100*time.Millisecond), "nothing to release before any burst")
	burst()
	assert.NotZero(t, quietFor(500*time.Millisecond), "a release after the burst")
	assert.Zero(t, quietFor(200*time.Millisecond), "none while quiet")
	burst()
	assert.NotZero(t, quietFor(500*time.Millisecond), "a release after the next burst")
}
