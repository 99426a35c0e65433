// Package pacer decides how many numbers a dialer should dial now for an order: the dialer's brain.
// It is a pure function of what the platform knows at that moment (the order's eligible agents and
// how long each has been in its state, the calls dialed and not yet ended, and what the order's
// finished calls taught: answer rate, how long a person takes to answer, handle times, abandoned
// calls), so that every lead-api replica answers the same and the simulator (internal/pacer/sim)
// can drive the very code the lease runs.
//
// Modes (services/lead/README.md, "Pacing"):
//   - preview: one call for a free agent, and only when no other call is already ringing for it.
//   - progressive: calls ringing ≤ agents available now.
//   - predictive (only where the order enables it): calls are dialed so that the answers expected
//     within a horizon (about when a call dialed now would be answered) match the agents free now
//     plus those expected to be free by then. An agent on a call for a seconds frees up within Δ
//     with probability P(H ≤ a+Δ | H > a+W), from the order's measured handle times H (talk plus
//     wrap-up W): the time already spent in a call counts. A ringing call of age x is answered
//     within Δ with the probability its age leaves, from the measured answer rate and answer delays.
//     Among the numbers of new calls, the pacer takes the largest whose expected overflow (answers
//     beyond free agents, the calls that would be abandoned) stays under a share of the expected
//     answers; that share shrinks as the order's abandon rate over its window nears the limit, and
//     at the limit the order falls back to progressive until the rate is back under.
package pacer

import (
	"math"
	"time"
)

// Modes of an order.
const (
	Preview     = "preview"
	Progressive = "progressive"
	Predictive  = "predictive"
)

// Agent states (pkg/telephony's vocabulary).
const (
	StateOffline   = "offline"
	StateAvailable = "available"
	StateRinging   = "ringing"
	StateOnCall    = "on-call"
	StateWrapUp    = "wrap-up"
	StatePaused    = "paused"
)

// Agent is one eligible agent of the order: its state and since when.
type Agent struct {
	State string
	Since time.Time
	// Elsewhere marks a state that concerns another order (the agent holds another order's
	// call): busy, but holding none of this order's calls in flight.
	Elsewhere bool
}

// Call is a call dialed for the order and not yet ended by its call event.
type Call struct {
	DialedAt time.Time
}

// Stats is what the order's finished calls taught.
type Stats struct {
	// Dialed and Answered count the recent calls, for the answer rate.
	Dialed, Answered int64
	// HandleTimes is a recent sample of handle times (talk plus wrap-up).
	HandleTimes []time.Duration
	// AnswerDelays is a recent sample of the times from the dial to the answer of answered calls.
	AnswerDelays []time.Duration
	// WrapUp is the usual wrap-up time (DefaultWrapUp when zero).
	WrapUp time.Duration
	// Abandoned and Live count, over the order's abandon window, the answered calls that found no
	// agent within 2 s and all the answered calls.
	Abandoned, Live int64
}

// Input is everything the pacer knows when a dialer asks.
type Input struct {
	Now               time.Time
	Mode              string
	PredictiveEnabled bool
	// MaxAbandonRate is the order's limit as a fraction (0.03).
	MaxAbandonRate float64
	// MaxLinesPerAgent caps the calls ringing per active agent (at most 20; 0 is 20).
	MaxLinesPerAgent float64
	// Agents are the order's eligible agents (for predictive, those whose phone mode is
	// predictive).
	Agents   []Agent
	InFlight []Call
	Stats    Stats
}

// Decision is what the dialer is told.
type Decision struct {
	// Dial is how many numbers to dial now (0 or more).
	Dial int
	// DialLevel is the calls ringing after this decision per active agent.
	DialLevel float64
	// RetryAfter is when to ask again.
	RetryAfter time.Duration
	// Suspended reports an order asked to pace predictively that is paced progressively now;
	// Reason says why.
	Suspended bool
	Reason    string
}

// Tuning of the predictive pacer, set from the simulator's model (docs/performance.md, "Pacing").
const (
	// DefaultWrapUp is the wrap-up time assumed when the order has measured none.
	DefaultWrapUp = 10 * time.Second
	// Grace is how long an answered call may wait for an agent before it counts as abandoned.
	Grace = 2 * time.Second
	// MinAnswers is how many answered calls an order needs before it is paced predictively: until
	// then its answer rate and handle times are guesses, and it is paced progressively.
	MinAnswers = 30
	// overflowShare is the share of the expected answers the pacer lets overflow the free agents
	// when the order's abandon rate is 45 % of its limit (twice as much at 0, none at steeringEnd).
	overflowShare = 0.012
	// steeringEnd is the share of the limit at which the allowance reaches 0.
	steeringEnd = 0.9
	// maxLinesPerAgent bounds the lines per agent whatever the order says.
	maxLinesPerAgent = 20
)

// Decide is how many numbers to dial now for the order, and why.
func Decide(in Input) Decision {
	active, available, connected := countAgents(in.Agents)
	ringing := max(0, len(in.InFlight)-connected)
	d := Decision{RetryAfter: time.Second}
	if active == 0 {
		d.RetryAfter = 5 * time.Second
		d.Reason = "no eligible agent is logged in"
		return d
	}
	// Lines per agent beyond maxLinesPerAgent would only bound the work of a decision, never the
	// dialing; unset (or no number) is that bound.
	lines := in.MaxLinesPerAgent
	if !(lines > 0) || lines > maxLinesPerAgent {
		lines = maxLinesPerAgent
	}
	in.MaxLinesPerAgent = lines
	linesCap := int(math.Floor(lines * float64(active)))
	switch {
	case in.Mode == Preview:
		if available > ringing {
			d.Dial = 1
		}
	case in.Mode == Predictive && !in.PredictiveEnabled:
		d = progressive(d, available, ringing)
		d.Suspended, d.Reason = true, "predictiveModeEnabled is off for the order"
	case in.Mode == Predictive && (math.IsNaN(in.MaxAbandonRate) || in.MaxAbandonRate < 0 || in.MaxAbandonRate > 1):
		d = progressive(d, available, ringing)
		d.Suspended, d.Reason = true, "the order's abandon limit is no rate from 0 to 1"
	case in.Mode == Predictive && (in.Stats.Answered < MinAnswers || len(in.Stats.HandleTimes) < MinAnswers || len(in.Stats.AnswerDelays) < MinAnswers):
		d = progressive(d, available, ringing)
		d.Suspended, d.Reason = true, "learning: fewer than 30 answered calls measured"
	case in.Mode == Predictive && in.MaxAbandonRate > 0 && abandonRate(in.Stats) >= steeringEnd*in.MaxAbandonRate:
		d = progressive(d, available, ringing)
		d.Suspended, d.Reason = true, "the abandon rate is at the order's limit (90 % of it: calls dialed now are answered later)"
	case in.Mode == Predictive:
		d.Dial = predictive(in, ringing)
	default:
		d = progressive(d, available, ringing)
	}
	d.Dial = max(0, min(d.Dial, linesCap-ringing))
	d.DialLevel = float64(ringing+d.Dial) / float64(active)
	return d
}

func progressive(d Decision, available, ringing int) Decision {
	d.Dial = available - ringing
	return d
}

// countAgents counts the agents logged in (not offline or paused), those available now, and those
// holding a call (ringing at their phone or talking): the dialed calls they hold are no longer
// ringing at a person's.
func countAgents(agents []Agent) (active, available, connected int) {
	for _, a := range agents {
		switch a.State {
		case StateAvailable:
			available++
		case StateRinging, StateOnCall:
			if !a.Elsewhere {
				connected++
			}
		case StateWrapUp:
		default:
			continue
		}
		active++
	}
	return active, available, connected
}

func abandonRate(s Stats) float64 {
	if s.Live == 0 {
		return 0
	}
	return float64(s.Abandoned) / float64(s.Live)
}
