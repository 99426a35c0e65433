package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callingOrder is an order calling Monday to Friday 09:00–18:00, not on Tuesday 24 November 2026,
// again 30 minutes after the first call and 2 hours after the second.
func callingOrder(t *testing.T, title string, ignoreLeadTimezone bool) (int64, string) {
	t.Helper()
	r := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", map[string]any{"title": title, "intervals": []int{30, 120}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	day := []string{"09:00", "18:00"}
	body := minimalOrder(title)
	body["callAttemptGroupId"] = r.Data(t)["id"]
	body["callSchedule"] = [][]string{day, day, day, day, day, {}, {}}
	body["callHolidayOverrides"] = []string{"2026-11-24"}
	body["ignoreLeadTimezone"] = ignoreLeadTimezone
	id := createOrder(t, body)
	return id, orderDetail(t, id)["code"].(string)
}

// waitLead polls the lead's detail until it shows statusId and planningCallDateTime (nil: none).
func waitLead(t *testing.T, id int64, statusID float64, planning any) {
	t.Helper()
	var d map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		d = leadDetail(t, id)
		if (d["statusId"] == statusID && d["planningCallDateTime"] == planning) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, statusID, d["statusId"], "lead %d", id)
	assert.Equal(t, planning, d["planningCallDateTime"], "lead %d", id)
}

// endingAt is a platform call of the lead that ended at ended.
func endingAt(lead, order int64, status string, ended time.Time) telephony.CallEvent {
	return platformCall(lead, order, 5, status, telephony.DirectionOutgoing, ended.Add(-20*time.Second), 0)
}

func TestFinishedCallsPlanTheLeadsNextCall(t *testing.T) {
	platform := newTelephonyPlatform(t)
	orderID, code := callingOrder(t, "Call results", false)
	lead := createLead(t, "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "utcOffset", 3))
	monday := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

	// 17:45 at +3: 30 minutes later the window has closed, Tuesday is a holiday, so Wednesday
	// 09:00 at +3.
	first := endingAt(lead, orderID, telephony.StatusNoAnswer, monday.Add(14*time.Hour+45*time.Minute))
	platform.send(t, first)
	waitLead(t, lead, 3, "2026-11-25T06:00:00+00:00")

	// The platform reports the same call again: one call, one attempt.
	again := first
	again.EventID = "again-" + first.EventID
	platform.send(t, again)
	// Busy on Wednesday 09:10 at +3: the second interval, 2 hours, is inside the window.
	platform.send(t, endingAt(lead, orderID, telephony.StatusBusy, monday.Add(2*24*time.Hour+6*time.Hour+10*time.Minute)))
	waitLead(t, lead, 8, "2026-11-25T08:10:00+00:00")

	platform.send(t, endingAt(lead, orderID, telephony.StatusInvalidNumber, monday.Add(2*24*time.Hour+8*time.Hour+15*time.Minute)))
	waitLead(t, lead, 7, nil)

	// The same order's rules read in UTC: 14:45 + 30 minutes is inside the window.
	utcOrder, utcCode := callingOrder(t, "Call results in UTC", true)
	utcLead := createLead(t, "/v2/lead/create/", with(v2Lead(utcOrder, utcCode, newPhone()), "utcOffset", 3))
	platform.send(t, endingAt(utcLead, utcOrder, telephony.StatusVoicemail, monday.Add(14*time.Hour+45*time.Minute)))
	waitLead(t, utcLead, 3, "2026-11-23T15:15:00+00:00")

	// A call of an order the order service does not know is recorded as skipped.
	stray := endingAt(lead, 987654321, telephony.StatusBusy, monday.Add(3*24*time.Hour))
	platform.send(t, stray)
	conn, err := db.Open(context.Background(), stack.DatabaseURL, "leads", 2)
	require.NoError(t, err)
	defer conn.Close()
	var results []struct {
		Outcome string  `db:"outcome"`
		Reason  *string `db:"reason"`
	}
	require.Eventually(t, func() bool {
		results = nil
		require.NoError(t, conn.Select(&results, `SELECT outcome, reason FROM lead_call_results WHERE lead_id = $1 ORDER BY processed_at, event_id`, lead))
		return len(results) == 4
	}, 30*time.Second, 100*time.Millisecond, "four events of the lead handled")
	last := results[3]
	assert.Equal(t, "skipped", last.Outcome)
	require.NotNil(t, last.Reason)
	assert.Equal(t, fmt.Sprintf("order %d does not exist", stray.OrderID), *last.Reason)
	var attempts int
	require.NoError(t, conn.Get(&attempts, `SELECT attempts FROM leads WHERE id = $1`, lead))
	assert.Equal(t, 3, attempts, "three calls applied, the duplicate and the stray call not")
}
