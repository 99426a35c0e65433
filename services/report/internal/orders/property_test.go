package orders_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/services/report/internal/agents"
	"ccplatform/services/report/internal/bucket"
	"ccplatform/services/report/internal/ingest"
	"ccplatform/services/report/internal/orders"
	"ccplatform/services/report/internal/servicetest"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// rawCall and rawEntry are the raw rows of a history: what the figures must be counts of.
type rawCall struct {
	id                 string
	order, lead, agent int64
	started            time.Time
	status             string
	talk               int64
}

type rawEntry struct {
	id     string
	typ    string
	order  int64
	status int64
	at     time.Time
}

var callStatuses = []string{"answered", "answered", "no_answer", "busy", "failed", "voicemail", "abandoned", "cancelled"}

// history is a random history over the weeks around the autumn DST changes of Europe and America.
func history(r *rand.Rand, orderIDs, agentIDs []int64) ([]rawCall, []rawEntry) {
	start := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)
	span := int64(17 * 24 * 3600)
	var calls []rawCall
	for range 300 + r.IntN(300) {
		talk := int64(0)
		st := callStatuses[r.IntN(len(callStatuses))]
		if st == "answered" || st == "abandoned" {
			talk = r.Int64N(600)
		}
		calls = append(calls, rawCall{id: uuid.NewString(), order: orderIDs[r.IntN(len(orderIDs))], lead: 1 + r.Int64N(40),
			agent: agentIDs[r.IntN(len(agentIDs))], started: start.Add(time.Duration(r.Int64N(span)) * time.Second), status: st, talk: talk})
	}
	var entries []rawEntry
	for range 100 + r.IntN(200) {
		typ := "lead.status_changed"
		if r.IntN(3) == 0 {
			typ = "lead.created"
		}
		entries = append(entries, rawEntry{id: uuid.NewString(), typ: typ, order: orderIDs[r.IntN(len(orderIDs))],
			status: 1 + r.Int64N(9), at: start.Add(time.Duration(r.Int64N(span)) * time.Second)})
	}
	return calls, entries
}

// deliveries are the history's messages as the broker hands them over: shuffled (late and out of
// order), some twice or three times (the same eventId), lead events partly in group messages.
func deliveries(r *rand.Rand, calls []rawCall, entries []rawEntry, states []rawState) []mq.Delivery {
	var out []mq.Delivery
	for _, st := range states {
		out = append(out, mq.Delivery{Type: ingest.AgentStateChanged,
			Body: servicetest.AgentState(st.id, st.agent, st.state, st.reason, st.order, st.at)})
	}
	for _, c := range calls {
		out = append(out, mq.Delivery{Type: ingest.CallFinished,
			Body: servicetest.CallFinished(c.id, c.order, c.lead, c.agent, c.status, c.started, c.talk)})
	}
	var group [][]byte
	for _, e := range entries {
		body, _ := json.Marshal(servicetest.LeadEvent(e.id, e.typ, e.order, e.status, e.at))
		if r.IntN(2) == 0 {
			out = append(out, mq.Delivery{Type: e.typ, Body: body})
			continue
		}
		group = append(group, body)
		if len(group) == 1+r.IntN(20) {
			out = append(out, mq.Delivery{Type: event.GroupType, Body: mq.JoinGroup(group)})
			group = nil
		}
	}
	if len(group) > 0 {
		out = append(out, mq.Delivery{Type: event.GroupType, Body: mq.JoinGroup(group)})
	}
	for i, n := 0, len(out); i < n; i++ {
		for range r.IntN(3) / 2 * (1 + r.IntN(2)) { // about a quarter again, some twice again
			out = append(out, out[i])
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// expected is a row's figures counted over the raw rows whose time falls in the interval.
func expected(row orders.Row, in func(time.Time) bool, start, end time.Time, calls []rawCall, entries []rawEntry, states []rawState) orders.Row {
	want := orders.Row{OrderID: row.OrderID, From: row.From, To: row.To, Statuses: map[string]int64{}}
	for id := 1; id <= 9; id++ {
		want.Statuses[strconv.Itoa(id)] = 0
	}
	leads := map[int64]bool{}
	var handled int64
	for _, c := range calls {
		if c.order != row.OrderID || !in(c.started) {
			continue
		}
		want.Calls++
		want.TalkSeconds += c.talk
		leads[c.lead] = true
		switch c.status {
		case "answered":
			want.Answered++
			handled++
		case "abandoned":
			want.Answered++
			want.Abandoned++
		}
	}
	want.LeadsCalled = int64(len(leads))
	for _, e := range entries {
		if e.order == row.OrderID && in(e.at) {
			want.Statuses[strconv.FormatInt(e.status, 10)]++
			if e.status == 4 {
				want.Conversions++
			}
		}
	}
	r4 := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(int64(float64(a)/float64(b)*10000+0.5)) / 10000
	}
	// Agent time in the order: the closed segments (a later state ended them) announced with it.
	var agentMS, wrapMS int64
	byAgent := map[int64][]rawState{}
	for _, st := range states {
		byAgent[st.agent] = append(byAgent[st.agent], st)
	}
	for _, mine := range byAgent {
		sortStates(mine)
		for i := 0; i+1 < len(mine); i++ {
			st := mine[i]
			if st.order != row.OrderID || st.state == "offline" {
				continue
			}
			from, to := st.at, mine[i+1].at
			if from.Before(start) {
				from = start
			}
			if to.After(end) {
				to = end
			}
			if from.Before(to) {
				agentMS += to.Sub(from).Milliseconds()
				if st.state == "wrap-up" {
					wrapMS += to.Sub(from).Milliseconds()
				}
			}
		}
	}
	rf := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return float64(int64(a/b*10000+0.5)) / 10000
	}
	want.ContactRate, want.AbandonRate = r4(want.Answered, want.Calls), r4(want.Abandoned, want.Answered)
	want.AvgHandleSeconds = rf(float64(want.TalkSeconds)+float64(wrapMS)/1000, float64(handled))
	want.CallsPerAgentHour = rf(float64(want.Calls), float64(agentMS)/float64(time.Hour/time.Millisecond))
	return want
}

// The property: for random histories delivered late, twice and out of order (by two consumers at
// once), and random periods in zones that change their clocks inside them, every row of the
// report equals the counts over the raw rows of its order whose time falls in its interval, told
// by the zone's own clock (the hour with its offset, the local date), not by the report's grid.
func TestEveryIntervalEqualsTheCountsOverTheRawRows(t *testing.T) {
	for round := range 3 {
		seed := uint64(time.Now().UnixNano())
		t.Run(fmt.Sprintf("round %d seed %d", round, seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(round)))
			// Orders of this run alone: the package's database outlives a run (-count).
			base := 1_000_000 + r.Int64N(1_000_000_000)
			orderIDs := []int64{base + 1, base + 2, base + 3}
			agentIDs := []int64{base + 1, base + 2, base + 3, base + 4}
			calls, entries := history(r, orderIDs, agentIDs)
			states := agentHistory(r, agentIDs, orderIDs)
			msgs := deliveries(r, calls, entries, states)

			consumer := ingest.NewConsumer(env.DB, zap.NewNop())
			var wg sync.WaitGroup
			var mu sync.Mutex
			for w := range 2 {
				wg.Go(func() {
					for i := w; i < len(msgs); {
						n := 1 + r2(seed, i, 60)
						batch := msgs[i:min(i+n, len(msgs))]
						for j, res := range consumer.Handle(context.Background(), batch) {
							if res.Outcome != mq.Ack {
								mu.Lock()
								t.Errorf("message %d: %v %s", i+j, res.Outcome, res.Reason)
								mu.Unlock()
							}
						}
						i += 2 * n
					}
				})
			}
			wg.Wait()
			// Each worker took every other slice of its own sizes: hand every message once more in
			// one batch, so that each is certainly handled (a copy changes nothing).
			for _, res := range consumer.Handle(context.Background(), msgs) {
				require.Equal(t, mq.Ack, res.Outcome, res.Reason)
			}

			// Each unit in a zone of whole hours over these weeks (read from the hourly roll-up; the
			// total from whole hours too) and in one of half or quarter hours (read from the 15-minute
			// buckets; its total from a quarter past).
			grids := map[bool]int{}
			for q := range 6 {
				tz := []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe"}[r.IntN(3)]
				if q%2 == 1 {
					tz = []string{"Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns"}[r.IntN(3)]
				}
				loc, err := time.LoadLocation(tz)
				require.NoError(t, err)
				unit := []string{"hour", "day", "total"}[q%3]
				from := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(8*24*60)) * time.Minute)
				to := from.Add(time.Duration(1+r.Int64N(8*24*60)) * time.Minute)
				switch q {
				case 2:
					from, to = from.Truncate(time.Hour), to.Truncate(time.Hour).Add(time.Hour)
				case 5:
					from = from.Truncate(time.Hour).Add(15 * time.Minute)
				}
				query := url.Values{"orderIds[]": {fmt.Sprint(orderIDs[0]), fmt.Sprint(orderIDs[1]), fmt.Sprint(orderIDs[2])},
					"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "interval": {unit}, "tz": {tz}}
				res := env.Do(t, http.MethodGet, "/v2/report/orders?"+query.Encode(), nil)
				require.Equal(t, http.StatusOK, res.Status, res.Message)
				rows := rowsOf(t, res.Data)
				require.NotEmpty(t, rows)
				var starts []time.Time
				for _, row := range rows[:len(rows)/len(orderIDs)] {
					start, err := time.Parse(time.RFC3339, row.From)
					require.NoError(t, err)
					starts = append(starts, start)
				}
				end, err := time.Parse(time.RFC3339, rows[len(rows)-1].To)
				require.NoError(t, err)
				grids[bucket.OnHours(append(starts, end))]++
				for _, row := range rows {
					start, err := time.Parse(time.RFC3339, row.From)
					require.NoError(t, err)
					end, err := time.Parse(time.RFC3339, row.To)
					require.NoError(t, err)
					in := func(at time.Time) bool { return !at.Before(start) && at.Before(end) }
					switch unit {
					case "hour":
						key := func(at time.Time) string {
							l := at.In(loc)
							_, off := l.Zone()
							return l.Format("2006-01-02 15") + strconv.Itoa(off)
						}
						in = func(at time.Time) bool { return key(at) == key(start) }
						require.Equal(t, key(start), key(end.Add(-time.Nanosecond)), "an hour interval is one local hour: %s %s", row.From, row.To)
					case "day":
						key := func(at time.Time) string { return at.In(loc).Format(time.DateOnly) }
						in = func(at time.Time) bool { return key(at) == key(start) }
						require.Equal(t, key(start), key(end.Add(-time.Nanosecond)), "a day interval is one local date: %s %s", row.From, row.To)
					}
					require.Equal(t, expected(row, in, start, end, calls, entries, states), row, "%s %s in %s", unit, row.From, tz)
				}

				aq := url.Values{"userIds[]": {fmt.Sprint(agentIDs[0]), fmt.Sprint(agentIDs[1]), fmt.Sprint(agentIDs[2]), fmt.Sprint(agentIDs[3])},
					"from": query["from"], "to": query["to"], "interval": {unit}, "tz": {tz}}
				res = env.Do(t, http.MethodGet, "/v2/report/agents?"+aq.Encode(), nil)
				require.Equal(t, http.StatusOK, res.Status, res.Message)
				var page struct {
					List []agents.Row `json:"list"`
				}
				require.NoError(t, json.Unmarshal(res.Data, &page))
				require.Len(t, page.List, len(rows)/len(orderIDs)*len(agentIDs))
				for _, row := range page.List {
					start, _ := time.Parse(time.RFC3339, row.From)
					end, _ := time.Parse(time.RFC3339, row.To)
					require.Equal(t, expectedAgent(row, start, end, servicetest.Now, calls, states), row, "agent %s %s in %s", unit, row.From, tz)
				}
			}
			require.Equal(t, 3, grids[true], "half the reports read the hourly roll-up")
			require.Equal(t, 3, grids[false], "half the reports read the 15-minute buckets")
		})
	}
}

// rawState is an agent entering a state: the raw rows of the agents report.
type rawState struct {
	id            string
	agent, order  int64
	state, reason string
	at            time.Time
}

var agentStateNames = []string{"available", "available", "ringing", "on-call", "on-call", "wrap-up", "paused", "offline"}

// agentHistory is each agent's random states over the same weeks.
func agentHistory(r *rand.Rand, agentIDs, orderIDs []int64) []rawState {
	start := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)
	var out []rawState
	for _, a := range agentIDs {
		for range 40 + r.IntN(80) {
			st := rawState{id: uuid.NewString(), agent: a, state: agentStateNames[r.IntN(len(agentStateNames))],
				at: start.Add(time.Duration(r.Int64N(17*24*3600)) * time.Second)}
			if st.state == "paused" {
				st.reason = []string{"", "lunch", "training"}[r.IntN(3)]
			}
			if r.IntN(2) == 0 {
				st.order = orderIDs[r.IntN(len(orderIDs))]
			}
			out = append(out, st)
		}
	}
	return out
}

// expectedAgent is an agents report row counted over the raw rows: the agent's calls that started
// in [start, end), and each state from its time to the next state's (the last to now).
func expectedAgent(row agents.Row, start, end, now time.Time, calls []rawCall, states []rawState) agents.Row {
	want := agents.Row{UserID: row.UserID, From: row.From, To: row.To, PausedByReason: map[string]float64{}}
	var handled int64
	for _, c := range calls {
		if c.agent == row.UserID && !c.started.Before(start) && c.started.Before(end) {
			want.Calls++
			want.TalkSeconds += c.talk
			if c.status == "answered" {
				handled++
			}
		}
	}
	var mine []rawState
	for _, st := range states {
		if st.agent == row.UserID {
			mine = append(mine, st)
		}
	}
	sortStates(mine)
	for i, st := range mine {
		to := now
		if i+1 < len(mine) {
			to = mine[i+1].at
		}
		from := st.at
		if from.Before(start) {
			from = start
		}
		if to.After(end) {
			to = end
		}
		if !from.Before(to) {
			continue
		}
		sec := to.Sub(from).Seconds()
		switch st.state {
		case "available":
			want.AvailableSeconds += sec
		case "ringing":
			want.RingingSeconds += sec
		case "on-call":
			want.OnCallSeconds += sec
		case "wrap-up":
			want.WrapUpSeconds += sec
		case "paused":
			want.PausedSeconds += sec
			want.PausedByReason[st.reason] += sec
		}
	}
	r4 := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return float64(int64(a/b*10000+0.5)) / 10000
	}
	want.AvgHandleSeconds = r4(float64(want.TalkSeconds)+want.WrapUpSeconds, float64(handled))
	want.Occupancy = r4(want.OnCallSeconds+want.WrapUpSeconds, want.AvailableSeconds+want.RingingSeconds+want.OnCallSeconds+want.WrapUpSeconds)
	return want
}

// sortStates orders an agent's states as their history does: by time, then event id.
func sortStates(s []rawState) {
	slices.SortFunc(s, func(a, b rawState) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
}

// r2 is a deterministic size for a slice of the history from its seed and position.
func r2(seed uint64, i, n int) int { return int((seed>>7 + uint64(i)*2654435761) % uint64(n)) }
