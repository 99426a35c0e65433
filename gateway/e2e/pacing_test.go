package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type paceView struct {
	Mode                string           `json:"mode"`
	DialLevel           float64          `json:"dialLevel"`
	Agents              map[string]int64 `json:"agents"`
	CallsInFlight       int              `json:"callsInFlight"`
	PredictiveSuspended bool             `json:"predictiveSuspended"`
	SuspendedReason     *string          `json:"suspendedReason"`
	Abandon30d          struct {
		Abandoned int64 `json:"abandoned"`
		Live      int64 `json:"live"`
	} `json:"abandon30d"`
}

func paceOf(t *testing.T, orderID int64) paceView {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/dialer/pace/"+strconv.FormatInt(orderID, 10)+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var p paceView
	require.NoError(t, json.Unmarshal(r.Env.Data, &p))
	return p
}

// The dialer's brain through the real stack: agents come available on telephony.agents, a paced
// lease (no limit) hands out one lead per free agent while the order is learning, the telephony
// platform's calls that no agent took within 2 s raise the abandon rate, and at the limit the pace
// shows predictive suspended while the lease goes on progressively.
func TestPacedDialingIsSuspendedAtTheAbandonLimit(t *testing.T) {
	setClock := fixClock(t)
	monday := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) // 15:00 at +3: inside the window
	setClock(monday)
	platform := newTelephonyPlatform(t)

	var team []int64
	for i := range 3 {
		out, err := stack.UserAdmin("user", "create", "--email", fmt.Sprintf("pacer.%d.%d@pacing.e2e", i, time.Now().UnixNano()),
			"--access-group", "call-center", "--phone-mode", "predictive")
		require.NoError(t, err)
		id, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		require.NoError(t, err, out)
		team = append(team, id)
	}
	r := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", map[string]any{"title": "Paced", "intervals": []int{30, 120}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	day := []string{"09:00", "18:00"}
	body := minimalOrder("Paced dialing")
	body["callAttemptGroupId"] = r.Data(t)["id"]
	body["callSchedule"] = [][]string{day, day, day, day, day, {}, {}}
	body["autoDialingEnabled"] = true
	body["predictiveModeEnabled"] = true
	body["pacingMode"] = "predictive"
	body["maxAbandonRatePercent"] = 3
	body["agentUserIds"] = team
	orderID := createOrder(t, body)
	code := orderDetail(t, orderID)["code"].(string)
	var leads []int64
	for range 60 {
		leads = append(leads, createLead(t, "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "utcOffset", 3)))
	}

	// The agents come available.
	for _, id := range team {
		platform.agent(t, telephony.AgentEvent{EventID: uuid.NewString(), UserID: id, At: time.Now().UTC().Add(-time.Second), State: telephony.AgentAvailable})
	}
	require.Eventually(t, func() bool { return paceOf(t, orderID).Agents["available"] == 3 }, 20*time.Second, 100*time.Millisecond,
		"the pace sees the three agents available")

	// Learning (no calls measured yet): one lead per free agent, and when to ask again.
	r = stack.Call(t, http.MethodPost, "/v2/dialer/lease/", map[string]any{"orderId": orderID, "dialerId": "paced"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var paced struct {
		List         []struct{ ID int64 } `json:"list"`
		DialLevel    *float64             `json:"dialLevel"`
		RetryAfterMs *int64               `json:"retryAfterMs"`
	}
	require.NoError(t, json.Unmarshal(r.Env.Data, &paced))
	assert.Len(t, paced.List, 3, "progressive while learning: one lead per free agent")
	require.NotNil(t, paced.DialLevel)
	assert.Equal(t, 1.0, *paced.DialLevel)
	require.NotNil(t, paced.RetryAfterMs)
	p := paceOf(t, orderID)
	assert.True(t, p.PredictiveSuspended)
	require.NotNil(t, p.SuspendedReason)
	assert.Contains(t, *p.SuspendedReason, "learning")

	// The platform reports 40 calls agents took and 10 that found no agent: 20 % abandoned.
	ended := monday.Add(-30 * time.Minute)
	for i, lead := range leads[10:60] {
		ev := platformCall(lead, orderID, team[i%3], telephony.StatusAnswered, telephony.DirectionOutgoing, ended.Add(-3*time.Minute), 2*time.Minute)
		if i%5 == 0 {
			ev.AgentConnectedAt = nil
		}
		platform.send(t, ev)
	}
	require.Eventually(t, func() bool { return paceOf(t, orderID).Abandon30d.Live == 50 }, 60*time.Second, 200*time.Millisecond,
		"the calls reach the order's dialing statistics")
	p = paceOf(t, orderID)
	assert.Equal(t, int64(10), p.Abandon30d.Abandoned)
	assert.True(t, p.PredictiveSuspended, "20 %% abandoned against a 3 %% limit")
	require.NotNil(t, p.SuspendedReason)
	assert.Contains(t, *p.SuspendedReason, "limit")
	assert.Equal(t, "predictive", p.Mode)
}
