package dialer_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"ccplatform/services/lead/internal/dialer"
	"ccplatform/services/lead/internal/orders"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type explanation struct {
	Due     int64 `json:"due"`
	NotDue  int64 `json:"notDue"`
	Reasons []struct {
		Reason            string  `json:"reason"`
		Count             int64   `json:"count"`
		NextWindowAt      *string `json:"nextWindowAt"`
		EarliestPlannedAt *string `json:"earliestPlannedAt"`
	} `json:"reasons"`
}

func explain(t *testing.T, o orders.Order) (explanation, map[string]int64) {
	t.Helper()
	res := env.Do(t, http.MethodGet, "/v2/dialer/explain/"+strconv.FormatInt(o.ID, 10), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var e explanation
	require.NoError(t, json.Unmarshal(res.Data, &e))
	counts := map[string]int64{}
	for _, r := range e.Reasons {
		counts[r.Reason] = r.Count
	}
	return e, counts
}

func zeroReasons() map[string]int64 {
	out := map[string]int64{}
	for _, r := range dialer.ExplainOrder {
		out[r] = 0
	}
	return out
}

// Every lead that is not due is counted under the first rule it fails, and the lease hands out
// exactly the leads explain calls due.
func TestExplainNamesTheFirstReasonOfEachLead(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := staffed(t, nil, agent("available", "manual"))
	due := insert(t, o, row{offset: offset(3)})
	insert(t, o, row{offset: offset(9)})  // 21:00 there
	insert(t, o, row{offset: offset(10)}) // 22:00 there
	insert(t, o, row{offset: offset(3), planning: at(monday.Add(2 * time.Hour))})
	insert(t, o, row{offset: offset(3), planning: at(monday.Add(time.Hour))})
	insert(t, o, row{offset: offset(3), status: statusQualified})
	insert(t, o, row{offset: offset(3), lastCall: at(monday.Add(-time.Hour))}) // called, no next call
	listed := newPhone()
	insert(t, o, row{offset: offset(3), phone: listed})
	_, err := env.DB.Exec(`INSERT INTO dnc_entries (phone, order_id) VALUES ($1, $2)`, listed, o.ID)
	require.NoError(t, err)
	leasedID := insert(t, o, row{offset: offset(3)})
	_, err = env.DB.Exec(`UPDATE leads SET lease_id = gen_random_uuid(), leased_until = $2 WHERE id = $1`, leasedID, monday.Add(time.Minute))
	require.NoError(t, err)
	locked := insert(t, o, row{offset: offset(3)})
	_, err = env.DB.Exec(`UPDATE leads SET lockout_until = $2 WHERE id = $1`, locked, monday.Add(time.Hour))
	require.NoError(t, err)

	e, counts := explain(t, o)
	want := zeroReasons()
	want["outsideWindow"], want["plannedLater"], want["finalStatus"] = 2, 2, 1
	want["noNextCall"], want["doNotCall"], want["leased"], want["dropLockout"] = 1, 1, 1, 1
	assert.Equal(t, want, counts)
	assert.Equal(t, int64(1), e.Due)
	assert.Equal(t, int64(9), e.NotDue)
	for _, r := range e.Reasons {
		switch r.Reason {
		case "outsideWindow":
			require.NotNil(t, r.NextWindowAt)
			assert.Equal(t, "2026-11-24T23:00:00+00:00", *r.NextWindowAt, "+9 and +10 open Wednesday 09:00 local (Tuesday is a holiday): +10 first")
		case "plannedLater":
			require.NotNil(t, r.EarliestPlannedAt)
			assert.Equal(t, "2026-11-23T13:00:00+00:00", *r.EarliestPlannedAt)
		}
	}
	assert.Equal(t, []int64{due}, lease(t, o, 100).ids(), "the lease hands out what explain calls due")

	holiday := staffed(t, func(o *orders.Order) { o.CallHolidayOverrides = []string{"23.11.2026"} }, agent("available", "manual"))
	insert(t, holiday, row{offset: offset(3)}) // Monday 15:00 there, a holiday
	insert(t, holiday, row{offset: offset(9)}) // 21:00 there: outside the window first
	_, counts = explain(t, holiday)
	want = zeroReasons()
	want["holiday"], want["outsideWindow"] = 1, 1
	assert.Equal(t, want, counts)
}

// The order-level reasons: auto-dialing off comes first, the daily limit and the agents last.
func TestExplainNamesTheOrdersOwnReasons(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	off := staffed(t, func(o *orders.Order) { o.AutoDialingEnabled = false }, agent("available", "manual"))
	insert(t, off, row{offset: offset(3)})
	insert(t, off, row{offset: offset(3), status: statusQualified})
	_, counts := explain(t, off)
	want := zeroReasons()
	want["autoDialOff"] = 2
	assert.Equal(t, want, counts)

	busy := staffed(t, nil, agent("on-call", "manual"))
	insert(t, busy, row{offset: offset(3)})
	insert(t, busy, row{offset: offset(9)})
	_, counts = explain(t, busy)
	want = zeroReasons()
	want["noAgent"], want["outsideWindow"] = 1, 1
	assert.Equal(t, want, counts)

	limit := int64(1)
	capped := staffed(t, func(o *orders.Order) { o.QualifiedLeadsPerDayLimit = &limit }, agent("available", "manual"))
	insert(t, capped, row{offset: offset(3)})
	won := insert(t, capped, row{offset: offset(3), status: statusQualified})
	_, err := env.DB.Exec(`UPDATE leads SET status_changed_at = $2 WHERE id = $1`, won, monday.Add(-time.Hour))
	require.NoError(t, err)
	_, counts = explain(t, capped)
	want = zeroReasons()
	want["dailyLimit"], want["finalStatus"] = 1, 1
	assert.Equal(t, want, counts)
}
