package delivery_test

import (
	"testing"
	"time"

	"ccplatform/services/webhook/internal/delivery"

	"github.com/stretchr/testify/assert"
)

func TestScheduleSpansUnderADayWithJitterOfTenPercent(t *testing.T) {
	var total time.Duration
	for _, d := range delivery.Schedule {
		total += d
	}
	assert.Less(t, total, delivery.RetryWindow, "every retry fits the window")
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

	next, ok := delivery.NextAttempt(1, t0, t0, 0.5)
	assert.True(t, ok)
	assert.Equal(t, t0.Add(5*time.Second), next, "no jitter at the middle of the draw")
	lo, _ := delivery.NextAttempt(3, t0, t0, 0)
	hi, _ := delivery.NextAttempt(3, t0, t0, 0.999999)
	assert.Equal(t, t0.Add(108*time.Second), lo, "2 min - 10%")
	assert.WithinDuration(t, t0.Add(132*time.Second), hi, time.Millisecond, "2 min + 10%")

	// The last retry at the end of the schedule, then nothing.
	at := t0
	for n := 1; n <= len(delivery.Schedule); n++ {
		next, ok := delivery.NextAttempt(n, t0, at, 0.5)
		assert.True(t, ok, "attempt %d", n)
		at = next
	}
	_, ok = delivery.NextAttempt(len(delivery.Schedule)+1, t0, at, 0.5)
	assert.False(t, ok, "the retries are spent")
	_, ok = delivery.NextAttempt(2, t0, t0.Add(RetryWindowMinus(time.Second)), 0.5)
	assert.False(t, ok, "no retry past 24 h from the first attempt")
}

// RetryWindowMinus is the retry window less d.
func RetryWindowMinus(d time.Duration) time.Duration { return delivery.RetryWindow - d }
