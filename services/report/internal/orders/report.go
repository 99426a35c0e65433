// Package orders is the orders report (GET /v2/report/orders/): for each visible order and each
// interval of the caller's period, its calls, contacts, abandons, talk, leads and conversions,
// summed from the 15-minute buckets the consumer keeps.
package orders

import (
	"slices"
	"strconv"
	"time"

	"ccplatform/services/report/internal/period"
	"ccplatform/services/report/internal/statuses"
)

// Row is one order in one interval (the API's OrderReportRow).
type Row struct {
	OrderID int64 `json:"orderId"`
	// From and To bound the interval, written in the caller's zone.
	From        string  `json:"from"`
	To          string  `json:"to"`
	Calls       int64   `json:"calls"`
	Answered    int64   `json:"answered"`
	ContactRate float64 `json:"contactRate"`
	Abandoned   int64   `json:"abandoned"`
	AbandonRate float64 `json:"abandonRate"`
	TalkSeconds int64   `json:"talkSeconds"`
	// AvgHandleSeconds is talk plus wrap-up (the wrap-up states announced with the order) per call
	// an agent took.
	AvgHandleSeconds float64 `json:"avgHandleSeconds"`
	LeadsCalled      int64   `json:"leadsCalled"`
	// Statuses counts the leads entering each status of the catalog, by status id.
	Statuses    map[string]int64 `json:"statuses"`
	Conversions int64            `json:"conversions"`
	// CallsPerAgentHour is calls per hour of agent time logged in the order: the states (offline
	// aside) agents announced with the order, once the next state ended them (0 while none is known).
	CallsPerAgentHour float64 `json:"callsPerAgentHour"`
}

// ratio is a/b, 0 when b is 0 (an interval without data reads as zeros), rounded to 4 places.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return float64(int64(a/b*10000+0.5)) / 10000
}

// Build writes the rows of orderIDs (in that order) over p's intervals, zeros where there is no
// data, from the stored sums and status entries.
func Build(orderIDs []int64, p period.Period, sums []Sums, entered []Entered, agentTime []AgentTime, catalog []statuses.Status) []Row {
	type key struct {
		order int64
		i     int
	}
	bySum := make(map[key]Sums, len(sums))
	for _, s := range sums {
		bySum[key{s.OrderID, s.Interval}] = s
	}
	byTime := make(map[key]AgentTime, len(agentTime))
	for _, a := range agentTime {
		byTime[key{a.OrderID, a.Interval}] = a
	}
	byEntry := map[key]map[int64]int64{}
	for _, e := range entered {
		k := key{e.OrderID, e.Interval}
		if byEntry[k] == nil {
			byEntry[k] = map[int64]int64{}
		}
		byEntry[k][e.StatusID] += e.Entered
	}
	rows := make([]Row, 0, len(orderIDs)*p.Len())
	for _, id := range orderIDs {
		for i := range p.Len() {
			s, k := bySum[key{id, i}], key{id, i}
			r := Row{OrderID: id, From: p.Starts[i].In(p.Loc).Format(time.RFC3339), To: p.Starts[i+1].In(p.Loc).Format(time.RFC3339),
				Calls: s.Calls, Answered: s.Answered, ContactRate: ratio(float64(s.Answered), float64(s.Calls)),
				Abandoned: s.Abandoned, AbandonRate: ratio(float64(s.Abandoned), float64(s.Answered)),
				TalkSeconds: s.TalkSeconds, AvgHandleSeconds: ratio(float64(s.TalkSeconds)+float64(byTime[k].WrapUpMS)/1000, float64(s.Handled)),
				LeadsCalled: s.LeadsCalled, Statuses: make(map[string]int64, len(catalog)),
				CallsPerAgentHour: ratio(float64(s.Calls), float64(byTime[k].MS)/float64(time.Hour/time.Millisecond))}
			for _, st := range catalog {
				n := byEntry[k][st.ID]
				r.Statuses[strconv.FormatInt(st.ID, 10)] = n
				if st.Category == statuses.Success {
					r.Conversions += n
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// Orders are the orders a report lists: those asked for, or, when none were named, those of the
// caller's scope (every order with data in the period for staff), in id order.
func Orders(asked []int64, visible Scope, sums []Sums, entered []Entered) []int64 {
	if len(asked) > 0 {
		out := slices.Clone(asked)
		slices.Sort(out)
		return out
	}
	if !visible.All {
		out := slices.Clone(visible.OrderIDs)
		slices.Sort(out)
		return slices.Compact(out)
	}
	var out []int64
	for _, s := range sums {
		out = append(out, s.OrderID)
	}
	for _, e := range entered {
		out = append(out, e.OrderID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
