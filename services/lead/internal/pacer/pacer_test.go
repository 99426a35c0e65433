package pacer_test

import (
	"math"
	"testing"
	"time"

	"ccplatform/services/lead/internal/pacer"

	"github.com/stretchr/testify/assert"
)

var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func agents(states ...string) []pacer.Agent {
	out := make([]pacer.Agent, len(states))
	for i, s := range states {
		out[i] = pacer.Agent{State: s, Since: now.Add(-time.Minute)}
	}
	return out
}

func calls(n int) []pacer.Call {
	out := make([]pacer.Call, n)
	for i := range out {
		out[i] = pacer.Call{DialedAt: now.Add(-3 * time.Second)}
	}
	return out
}

// learned is an order with enough measured calls: a quarter answered 5 to 15 s after the dial,
// handle times of 1 to 5 minutes.
func learned() pacer.Stats {
	s := pacer.Stats{Dialed: 400, Answered: 100, Live: 100}
	for i := range 100 {
		s.HandleTimes = append(s.HandleTimes, time.Duration(60+i*240/100)*time.Second)
		s.AnswerDelays = append(s.AnswerDelays, time.Duration(5+i%11)*time.Second)
	}
	return s
}

func in(mode string, a []pacer.Agent, c []pacer.Call) pacer.Input {
	return pacer.Input{Now: now, Mode: mode, PredictiveEnabled: true, MaxAbandonRate: 0.03, MaxLinesPerAgent: 3,
		Agents: a, InFlight: c, Stats: learned()}
}

func TestProgressiveRingsNoMoreCallsThanAgentsAvailable(t *testing.T) {
	d := pacer.Decide(in(pacer.Progressive, agents("available", "available", "available", "on-call"), calls(2)))
	// Two calls in flight, one with the agent on a call: one rings, so two more.
	assert.Equal(t, 2, d.Dial)
	assert.InDelta(t, 3.0/4, d.DialLevel, 1e-9)
	assert.Equal(t, time.Second, d.RetryAfter)
	assert.False(t, d.Suspended)

	d = pacer.Decide(in(pacer.Progressive, agents("on-call", "wrap-up", "paused"), nil))
	assert.Zero(t, d.Dial, "nobody free")

	// An agent on another order's call holds none of this order's calls: all two ring.
	team := agents("available", "available", "available", "on-call")
	team[3].Elsewhere = true
	assert.Equal(t, 1, pacer.Decide(in(pacer.Progressive, team, calls(2))).Dial)
}

func TestPreviewDialsOneForAFreeAgent(t *testing.T) {
	assert.Equal(t, 1, pacer.Decide(in(pacer.Preview, agents("available", "available"), nil)).Dial)
	assert.Equal(t, 1, pacer.Decide(in(pacer.Preview, agents("available", "available"), calls(1))).Dial)
	assert.Zero(t, pacer.Decide(in(pacer.Preview, agents("available", "on-call"), calls(2))).Dial, "its call rings already")
}

func TestNoAgentLoggedInDialsNothingAndAsksLater(t *testing.T) {
	for _, mode := range []string{pacer.Preview, pacer.Progressive, pacer.Predictive} {
		d := pacer.Decide(in(mode, agents("offline", "paused"), nil))
		assert.Zero(t, d.Dial, mode)
		assert.Equal(t, 5*time.Second, d.RetryAfter, mode)
		assert.Equal(t, "no eligible agent is logged in", d.Reason)
	}
}

func TestPredictiveDialsAheadOfFreeAgents(t *testing.T) {
	team := agents("available", "available", "on-call", "on-call", "on-call", "on-call", "wrap-up", "on-call")
	pred := pacer.Decide(in(pacer.Predictive, team, nil))
	prog := pacer.Decide(in(pacer.Progressive, team, nil))
	assert.Greater(t, pred.Dial, prog.Dial, "a quarter answers: more lines than free agents")
	assert.False(t, pred.Suspended)
	assert.LessOrEqual(t, pred.DialLevel, 3.0)
}

func TestPredictiveCountsTheTimeAlreadySpentInACall(t *testing.T) {
	decide := func(onCallFor time.Duration) pacer.Decision {
		a := make([]pacer.Agent, 12)
		for i := range a {
			a[i] = pacer.Agent{State: pacer.StateOnCall, Since: now.Add(-onCallFor)}
		}
		i := in(pacer.Predictive, a, nil)
		// Every call takes 180 to 200 s with its wrap-up.
		i.Stats.HandleTimes = nil
		for k := range 100 {
			i.Stats.HandleTimes = append(i.Stats.HandleTimes, time.Duration(180+k%21)*time.Second)
		}
		return pacer.Decide(i)
	}
	assert.Zero(t, decide(10*time.Second).Dial, "nobody frees up before the answers")
	assert.Positive(t, decide(188*time.Second).Dial, "agents three minutes into their calls free up as the answers come")
}

func TestTheDialLevelIsCappedByLinesPerAgent(t *testing.T) {
	i := in(pacer.Predictive, agents("available", "available", "available", "available"), calls(3))
	i.MaxLinesPerAgent = 1
	d := pacer.Decide(i)
	assert.Equal(t, 1, d.Dial, "4 lines for 4 agents, 3 ringing")
	assert.InDelta(t, 1.0, d.DialLevel, 1e-9)
}

func TestPredictiveFallsBackToProgressive(t *testing.T) {
	team := agents("available", "available", "on-call", "on-call", "on-call", "on-call")
	cases := map[string]func(*pacer.Input){
		"predictiveModeEnabled is off for the order":      func(i *pacer.Input) { i.PredictiveEnabled = false },
		"learning: fewer than 30 answered calls measured": func(i *pacer.Input) { i.Stats.Answered, i.Stats.Dialed = 29, 100 },
		"the abandon rate is at the order's limit (90 % of it: calls dialed now are answered later)": func(i *pacer.Input) {
			i.Stats.Live, i.Stats.Abandoned = 1000, 27
		},
	}
	for reason, change := range cases {
		i := in(pacer.Predictive, team, nil)
		change(&i)
		d := pacer.Decide(i)
		assert.True(t, d.Suspended, reason)
		assert.Equal(t, reason, d.Reason)
		assert.Equal(t, 2, d.Dial, "progressive: one per free agent")
	}
	i := in(pacer.Predictive, team, nil)
	i.Stats.Live, i.Stats.Abandoned = 1000, 26
	assert.False(t, pacer.Decide(i).Suspended, "under 90 % of the limit")
}

func TestTheAllowanceShrinksAsTheRateNearsTheLimit(t *testing.T) {
	team := make([]pacer.Agent, 40)
	for k := range team {
		team[k] = pacer.Agent{State: pacer.StateOnCall, Since: now.Add(-time.Duration(30+k*6) * time.Second)}
		if k%5 == 0 {
			team[k].State = pacer.StateAvailable
		}
	}
	dial := func(abandoned int64) int {
		i := in(pacer.Predictive, team, nil)
		i.Stats.Live, i.Stats.Abandoned = 1000, abandoned
		return pacer.Decide(i).Dial
	}
	assert.GreaterOrEqual(t, dial(0), dial(15))
	assert.GreaterOrEqual(t, dial(15), dial(25))
	assert.Greater(t, dial(0), dial(25), "%d, %d, %d", dial(0), dial(15), dial(25))
}

func TestSettingsThatAreNoNumbersBoundTheDecision(t *testing.T) {
	team := agents("available", "available", "on-call", "on-call", "on-call", "on-call")
	i := in(pacer.Predictive, team, nil)
	i.MaxAbandonRate = math.NaN()
	d := pacer.Decide(i)
	assert.True(t, d.Suspended)
	assert.Equal(t, 2, d.Dial, "progressive")
	i = in(pacer.Predictive, team, nil)
	i.MaxLinesPerAgent = 1e12
	d = pacer.Decide(i)
	assert.LessOrEqual(t, d.DialLevel, 20.0, "at most 20 lines per agent")
	i = in(pacer.Predictive, team, nil)
	i.Stats.Answered, i.Stats.Dialed = 400, 100 // more answers than dials
	assert.LessOrEqual(t, pacer.Decide(i).DialLevel, 20.0)
}
