// Package agents is the agents report (GET /v2/report/agents/): for each agent and interval, their
// calls, talk and handle time, the time they spent available, ringing, on a call, in wrap-up and
// paused (by reason), and their occupancy, from the buckets report-worker keeps of calls and of
// agent.state.changed.
package agents

import (
	"slices"
	"time"

	"ccplatform/services/report/internal/ingest"
	"ccplatform/services/report/internal/period"
)

// Row is one agent in one interval (the API's AgentReportRow).
type Row struct {
	UserID           int64   `json:"userId"`
	From             string  `json:"from"`
	To               string  `json:"to"`
	Calls            int64   `json:"calls"`
	TalkSeconds      int64   `json:"talkSeconds"`
	AvgHandleSeconds float64 `json:"avgHandleSeconds"`
	AvailableSeconds float64 `json:"availableSeconds"`
	RingingSeconds   float64 `json:"ringingSeconds"`
	OnCallSeconds    float64 `json:"onCallSeconds"`
	WrapUpSeconds    float64 `json:"wrapUpSeconds"`
	PausedSeconds    float64 `json:"pausedSeconds"`
	// PausedByReason splits PausedSeconds by pause reason ("" for none given).
	PausedByReason map[string]float64 `json:"pausedByReason"`
	Occupancy      float64            `json:"occupancy"`
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return float64(int64(a/b*10000+0.5)) / 10000
}

// sums is one agent's figures in one interval, in milliseconds of state.
type sums struct {
	calls, handled, talk int64
	ms                   map[string]int64
	paused               map[string]int64
}

func (s *sums) addState(state, reason string, ms int64) {
	// A bucket a late state emptied keeps its row at 0: no reason is listed for it.
	if ms == 0 {
		return
	}
	if s.ms == nil {
		s.ms, s.paused = map[string]int64{}, map[string]int64{}
	}
	s.ms[state] += ms
	if state == "paused" {
		s.paused[reason] += ms
	}
}

// Build writes the rows of users (in that order, or every agent with data when users is nil) over
// p's intervals, zeros where there is no data. The current state of each agent lasts until now:
// its time is added to the intervals it overlaps (seen tells whether its order is counted).
func Build(users []int64, p period.Period, calls []CallSums, states []StateSums, current []Current, now time.Time, seen func(order int64) bool) []Row {
	type key struct {
		user int64
		i    int
	}
	by := map[key]*sums{}
	get := func(k key) *sums {
		s := by[k]
		if s == nil {
			s = &sums{}
			by[k] = s
		}
		return s
	}
	for _, c := range calls {
		s := get(key{c.UserID, c.Interval})
		s.calls, s.handled, s.talk = s.calls+c.Calls, s.handled+c.Handled, s.talk+c.TalkSeconds
	}
	for _, st := range states {
		get(key{st.UserID, st.Interval}).addState(st.State, st.PauseReason, st.MS)
	}
	for _, c := range current {
		if c.State == ingest.Offline || !seen(c.OrderID) {
			continue
		}
		for i := range p.Len() {
			from, to := p.Starts[i], p.Starts[i+1]
			if c.At.After(from) {
				from = c.At
			}
			if now.Before(to) {
				to = now
			}
			if from.Before(to) {
				get(key{c.UserID, i}).addState(c.State, c.PauseReason, to.Sub(from).Milliseconds())
			}
		}
	}
	if users == nil {
		for k := range by {
			users = append(users, k.user)
		}
		slices.Sort(users)
		users = slices.Compact(users)
	}
	rows := make([]Row, 0, len(users)*p.Len())
	sec := func(ms int64) float64 { return float64(ms) / 1000 }
	for _, u := range users {
		for i := range p.Len() {
			s := by[key{u, i}]
			if s == nil {
				s = &sums{}
			}
			r := Row{UserID: u, From: p.Starts[i].In(p.Loc).Format(time.RFC3339), To: p.Starts[i+1].In(p.Loc).Format(time.RFC3339),
				Calls: s.calls, TalkSeconds: s.talk, AvailableSeconds: sec(s.ms["available"]), RingingSeconds: sec(s.ms["ringing"]),
				OnCallSeconds: sec(s.ms["on-call"]), WrapUpSeconds: sec(s.ms["wrap-up"]), PausedSeconds: sec(s.ms["paused"]),
				PausedByReason: map[string]float64{}}
			for reason, ms := range s.paused {
				r.PausedByReason[reason] = sec(ms)
			}
			r.AvgHandleSeconds = ratio(float64(s.talk)+r.WrapUpSeconds, float64(s.handled))
			r.Occupancy = ratio(r.OnCallSeconds+r.WrapUpSeconds, r.AvailableSeconds+r.RingingSeconds+r.OnCallSeconds+r.WrapUpSeconds)
			rows = append(rows, r)
		}
	}
	return rows
}
