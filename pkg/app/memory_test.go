package app

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sink []byte

// A burst of allocations is followed by exactly one release once the process is quiet, and the
// next burst by one more; a quiet process is left alone.
func TestReleaseAfterBursts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	released := make(chan struct{}, 10)
	go releaseAfterBursts(ctx, 20*time.Millisecond, 1<<20, func() { released <- struct{}{} })

	burst := func() {
		for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
			sink = make([]byte, 1<<20)
			time.Sleep(time.Millisecond)
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
	assert.Equal(t, 1, quietFor(300*time.Millisecond), "one release after the burst")
	assert.Zero(t, quietFor(200*time.Millisecond), "none while quiet")
	burst()
	assert.Equal(t, 1, quietFor(300*time.Millisecond), "one release after the next burst")
}
