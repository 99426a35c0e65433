package dialer

import (
	"testing"
	"time"

	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/pacer"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPacerInputReadsTheOrder(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	list := []agents.Agent{{UserID: 1, State: "available", PhoneMode: "predictive"}, {UserID: 2, State: "available", PhoneMode: "manual"}}
	st := Stats{RecentDialed: 10, RecentLive: 4, Abandoned24h: 1, Live24h: 5, Abandoned30d: 3, Live30d: 50,
		HandleTimes: []time.Duration{time.Minute}, AnswerDelays: []time.Duration{7 * time.Second}}

	in := PacerInput(orders.Order{}, now, list, []time.Time{now.Add(-time.Second)}, st)
	assert.Equal(t, pacer.Input{Now: now, Mode: "progressive", MaxAbandonRate: 0.03, MaxLinesPerAgent: 3,
		Agents: []pacer.Agent{{State: "available"}, {State: "available"}}, InFlight: []pacer.Call{{DialedAt: now.Add(-time.Second)}},
		Stats: pacer.Stats{Dialed: 10, Answered: 4, HandleTimes: []time.Duration{time.Minute + pacer.DefaultWrapUp},
			AnswerDelays: []time.Duration{7 * time.Second}, WrapUp: pacer.DefaultWrapUp, Abandoned: 3, Live: 50}}, in,
		"an order read before it had pacing fields gets their defaults; the 30 d window; each talk time with the usual wrap-up")

	o := orders.Order{PacingMode: "predictive", PredictiveModeEnabled: true, MaxAbandonRatePercent: 5, AbandonWindow: "24h", MaxLinesPerAgent: 2}
	in = PacerInput(o, now, list, nil, st)
	assert.Equal(t, "predictive", in.Mode)
	assert.True(t, in.PredictiveEnabled)
	assert.InDelta(t, 0.05, in.MaxAbandonRate, 1e-12)
	assert.Equal(t, 2.0, in.MaxLinesPerAgent)
	assert.Len(t, in.Agents, 1, "predictive counts only predictive agents")
	assert.Equal(t, int64(1), in.Stats.Abandoned)
	assert.Equal(t, int64(5), in.Stats.Live)

	o.PredictiveModeEnabled = false
	assert.Len(t, PacerInput(o, now, list, nil, st).Agents, 2, "not dialing predictively: every agent")
}

func TestHandleFigures(t *testing.T) {
	mean, p90 := HandleFigures(nil)
	assert.Nil(t, mean)
	assert.Nil(t, p90)
	var sample []time.Duration
	for s := 10; s >= 1; s-- {
		sample = append(sample, time.Duration(s)*time.Second)
	}
	mean, p90 = HandleFigures(sample)
	require.NotNil(t, mean)
	assert.Equal(t, 5.5, *mean)
	assert.Equal(t, 9.0, *p90, "nearest rank: the 9th of 10")
}

func TestSuspension(t *testing.T) {
	s, why := Suspension(orders.Order{PacingMode: "predictive"}, pacer.Decision{})
	assert.True(t, s)
	assert.Equal(t, "predictiveModeEnabled is off", why)
	s, why = Suspension(orders.Order{PacingMode: "predictive", PredictiveModeEnabled: true}, pacer.Decision{Suspended: true, Reason: "abandon rate"})
	assert.True(t, s)
	assert.Equal(t, "abandon rate", why)
	s, _ = Suspension(orders.Order{}, pacer.Decision{})
	assert.False(t, s)
}

func TestExplainSumsTheGroups(t *testing.T) {
	day := callresult.Window{Start: 9 * 60, End: 18 * 60}
	rules := callresult.Rules{Week: callresult.Week{day, day, day, day, day}}
	now := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC) // Monday
	plus3, minus5 := 3, -5
	planned := now.Add(2 * time.Hour)
	e := Explain(rules, now, 4, []ExplainRow{
		{Reason: ReasonOutsideWindow, UTCOffset: &plus3, Count: 2},  // 23:00 there: Tuesday 09:00 = 06:00 UTC
		{Reason: ReasonOutsideWindow, UTCOffset: &minus5, Count: 1}, // 15:00 there: would be open; a stale zone set
		{Reason: ReasonPlannedLater, Count: 3, FirstPlanned: &planned},
		{Reason: ReasonDue, Count: 5},
	})
	assert.Equal(t, int64(5), e.Due)
	assert.Equal(t, int64(6), e.NotDue)
	require.Len(t, e.Reasons, len(ExplainOrder))
	assert.Equal(t, ReasonCount{Reason: ReasonOutsideWindow, Count: 3, NextWindowAt: ptr("2026-11-23T20:00:00+00:00")}, e.Reasons[1],
		"the earliest opening of the groups' windows")
	assert.Equal(t, ReasonCount{Reason: ReasonPlannedLater, Count: 3, EarliestPlannedAt: ptr("2026-11-23T22:00:00+00:00")}, e.Reasons[3])
}

func ptr[T any](v T) *T { return &v }
