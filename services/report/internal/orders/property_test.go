package orders_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
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
func history(r *rand.Rand, orderIDs []int64) ([]rawCall, []rawEntry) {
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
			agent: 1 + r.Int64N(5), started: start.Add(time.Duration(r.Int64N(span)) * time.Second), status: st, talk: talk})
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
func deliveries(r *rand.Rand, calls []rawCall, entries []rawEntry) []mq.Delivery {
	var out []mq.Delivery
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
func expected(row orders.Row, in func(time.Time) bool, calls []rawCall, entries []rawEntry) orders.Row {
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
	want.ContactRate, want.AbandonRate, want.AvgHandleSeconds = r4(want.Answered, want.Calls), r4(want.Abandoned, want.Answered), r4(want.TalkSeconds, handled)
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
			calls, entries := history(r, orderIDs)
			msgs := deliveries(r, calls, entries)

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

			for q := range 6 {
				tz := []string{"Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns"}[r.IntN(6)]
				loc, err := time.LoadLocation(tz)
				require.NoError(t, err)
				unit := []string{"hour", "day", "total"}[q%3]
				from := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(8*24*60)) * time.Minute)
				to := from.Add(time.Duration(1+r.Int64N(8*24*60)) * time.Minute)
				query := url.Values{"orderIds[]": {fmt.Sprint(orderIDs[0]), fmt.Sprint(orderIDs[1]), fmt.Sprint(orderIDs[2])},
					"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "interval": {unit}, "tz": {tz}}
				res := env.Do(t, http.MethodGet, "/v2/report/orders?"+query.Encode(), nil)
				require.Equal(t, http.StatusOK, res.Status, res.Message)
				rows := rowsOf(t, res.Data)
				require.NotEmpty(t, rows)
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
					require.Equal(t, expected(row, in, calls, entries), row, "%s %s in %s", unit, row.From, tz)
				}
			}
		})
	}
}

// r2 is a deterministic size for a slice of the history from its seed and position.
func r2(seed uint64, i, n int) int { return int((seed>>7 + uint64(i)*2654435761) % uint64(n)) }
