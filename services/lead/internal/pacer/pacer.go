// Package pacer decides how many leads a paced lease hands out now (services/lead/README.md,
// "Paced lease"). Decide is pure: its inputs are read by internal/dialer.
package pacer

import "time"

// Input is what a decision reads.
type Input struct {
	Now time.Time
	// Mode is "preview", "progressive" or "predictive".
	Mode              string
	PredictiveEnabled bool
	// MaxAbandonRate is a fraction (0.03 for 3 %).
	MaxAbandonRate   float64
	MaxLinesPerAgent float64
	// Agents are the eligible agents (for predictive, only those with phoneMode predictive).
	Agents []Agent
	// InFlight are the calls leased and not yet ended by a call event.
	InFlight []Call
	Stats    Stats
}

// Agent is an eligible agent's current state.
type Agent struct {
	State string
	Since time.Time
}

// Call is a call in flight.
type Call struct {
	DialedAt time.Time
}

// Stats are the order's recent dialing figures.
type Stats struct {
	// Dialed and Answered over the recent past, for the answer rate.
	Dialed, Answered int64
	// HandleTimes is a recent sample of talk + wrap-up.
	HandleTimes []time.Duration
	// Abandoned and Live over the order's abandon window.
	Abandoned, Live int64
}

// Decision is how many leads to lease now and when to ask again.
type Decision struct {
	Dial       int
	DialLevel  float64
	RetryAfter time.Duration
	Suspended  bool
	Reason     string
}

// Decide is the minimal pacing: progressive and predictive dial one line per available agent
// less the calls in flight, preview one lead while an agent is available.
func Decide(in Input) Decision {
	available := 0
	for _, a := range in.Agents {
		if a.State == "available" {
			available++
		}
	}
	d := Decision{DialLevel: 1, RetryAfter: time.Second}
	switch in.Mode {
	case "preview":
		if available > 0 {
			d.Dial = 1
		}
	default:
		d.Dial = max(available-len(in.InFlight), 0)
	}
	return d
}
