// Package delivery sends events to subscribed endpoints: the retry schedule, the signed HTTP
// attempt, the dispatcher loop that runs attempts without one endpoint holding up another, the
// endpoint's health (disabled after days of failure), and the delivery log routes.
package delivery

import (
	"math/rand/v2"
	"time"
)

// Schedule is the pause after each failed attempt: after the first, Schedule[0], and so on. The
// sum is under 24 h, so an event is tried 11 times over about 23.7 h, then marked failed.
var Schedule = []time.Duration{
	5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}

// RetryWindow bounds the retries of one delivery from its first attempt.
const RetryWindow = 24 * time.Hour

// DisableAfter is how long an endpoint may fail every delivery before it is disabled.
const DisableAfter = 72 * time.Hour

// jitterFraction spreads retries by ±10% so endpoints that failed together are not retried in one
// burst.
const jitterFraction = 0.1

// NextAttempt is when to try again after failed attempt number n (1-based) of a delivery first
// tried at first, failed at now; ok=false when the retries are spent. rnd in [0, 1) draws the
// jitter (rand.Float64 in production, fixed in tests).
func NextAttempt(n int, first, now time.Time, rnd float64) (time.Time, bool) {
	if n < 1 || n > len(Schedule) {
		return time.Time{}, false
	}
	d := Schedule[n-1]
	d += time.Duration((rnd*2 - 1) * jitterFraction * float64(d))
	next := now.Add(d)
	if next.Sub(first) > RetryWindow {
		return time.Time{}, false
	}
	return next, true
}

// Jitter is the production draw of NextAttempt's rnd.
func Jitter() float64 { return rand.Float64() }
