package dialer

import (
	"slices"
	"time"

	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/pacer"
)

// Pacing modes of an order (services/order/README.md, "Pacing").
const (
	ModePreview     = "preview"
	ModeProgressive = "progressive"
	ModePredictive  = "predictive"
)

// Defaults of the pacing fields, for an order read before the order service had them.
const (
	defaultMaxAbandonRatePercent = 3.0
	defaultMaxLinesPerAgent      = 3.0
	defaultAbandonWindow         = "30d"
)

// Stats are the order's dialing figures as the store reads them (internal/callresult writes them).
type Stats struct {
	// RecentDialed and RecentLive: the last RecentWindow, for the answer rate.
	RecentDialed, RecentLive int64
	// Abandoned and live calls over the last 24 hours and 30 days.
	Abandoned24h, Live24h, Abandoned30d, Live30d int64
	// HandleTimes is the latest HandleSample talk times, newest first, and AnswerDelays how long
	// the person took to answer each of those calls.
	HandleTimes, AnswerDelays []time.Duration
}

// RecentWindow is the recent past the answer rate is read over; HandleSample the handle times the
// pacer and the pace read.
const (
	RecentWindow = time.Hour
	HandleSample = 100
)

// ModeOf is the order's pacing mode, progressive when it has none.
func ModeOf(o orders.Order) string {
	switch o.PacingMode {
	case ModePreview, ModeProgressive, ModePredictive:
		return o.PacingMode
	}
	return ModeProgressive
}

// AbandonWindowOf is the order's abandon window, 30d when it has none.
func AbandonWindowOf(o orders.Order) string {
	if o.AbandonWindow == "24h" {
		return "24h"
	}
	return defaultAbandonWindow
}

// Predictive reports whether the order dials predictively: its mode says so and the contract's
// predictiveModeEnabled allows it.
func Predictive(o orders.Order) bool {
	return ModeOf(o) == ModePredictive && o.PredictiveModeEnabled
}

// PacerAgents are the agents the pacer counts: every eligible one, or in a predictive order only
// those whose phoneMode is predictive.
func PacerAgents(o orders.Order, list []agents.Agent) []pacer.Agent {
	out := make([]pacer.Agent, 0, len(list))
	for _, a := range list {
		if Predictive(o) && a.PhoneMode != agents.PhoneModePredictive {
			continue
		}
		var since time.Time
		if a.Since != nil {
			since = *a.Since
		}
		out = append(out, pacer.Agent{State: a.State, Since: since, Elsewhere: a.OrderID != nil && *a.OrderID != o.ID})
	}
	return out
}

// PacerInput is what pacer.Decide reads for order o at now.
func PacerInput(o orders.Order, now time.Time, list []agents.Agent, inFlight []time.Time, st Stats) pacer.Input {
	in := pacer.Input{Now: now, Mode: ModeOf(o), PredictiveEnabled: o.PredictiveModeEnabled,
		MaxAbandonRate: o.MaxAbandonRatePercent / 100, MaxLinesPerAgent: o.MaxLinesPerAgent,
		Agents: PacerAgents(o, list), InFlight: make([]pacer.Call, len(inFlight)),
		Stats: pacer.Stats{Dialed: st.RecentDialed, Answered: st.RecentLive, AnswerDelays: st.AnswerDelays,
			WrapUp: pacer.DefaultWrapUp, HandleTimes: make([]time.Duration, len(st.HandleTimes))}}
	// The calls tell their talk; wrap-up is not measured per call yet, so each handle time is its
	// talk plus the pacer's usual wrap-up.
	for i, t := range st.HandleTimes {
		in.Stats.HandleTimes[i] = t + pacer.DefaultWrapUp
	}
	if in.MaxAbandonRate <= 0 {
		in.MaxAbandonRate = defaultMaxAbandonRatePercent / 100
	}
	if in.MaxLinesPerAgent < 1 {
		in.MaxLinesPerAgent = defaultMaxLinesPerAgent
	}
	for i, t := range inFlight {
		in.InFlight[i] = pacer.Call{DialedAt: t}
	}
	in.Stats.Abandoned, in.Stats.Live = st.Abandoned30d, st.Live30d
	if AbandonWindowOf(o) == "24h" {
		in.Stats.Abandoned, in.Stats.Live = st.Abandoned24h, st.Live24h
	}
	return in
}

// Rate is part/whole, nil when nothing was counted.
func Rate(part, whole int64) *float64 {
	if whole <= 0 {
		return nil
	}
	r := float64(part) / float64(whole)
	return &r
}

// HandleFigures are the mean and the 90th percentile (nearest rank) of a handle-time sample, in
// seconds; nil for an empty sample.
func HandleFigures(sample []time.Duration) (mean, p90 *float64) {
	if len(sample) == 0 {
		return nil, nil
	}
	sorted := slices.Sorted(slices.Values(sample))
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	m := (sum / time.Duration(len(sorted))).Seconds()
	rank := (len(sorted)*9 + 9) / 10 // ceil(0.9 n)
	p := sorted[rank-1].Seconds()
	return &m, &p
}

// Suspension is whether predictive dialing is suspended for o, and why: the order asks for
// predictive but predictiveModeEnabled is off, or the pacer suspended it (its reason).
func Suspension(o orders.Order, d pacer.Decision) (bool, string) {
	if ModeOf(o) == ModePredictive && !o.PredictiveModeEnabled {
		return true, "predictiveModeEnabled is off"
	}
	return d.Suspended, d.Reason
}
