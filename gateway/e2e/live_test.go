package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type liveAgent struct {
	UserID      int64   `json:"userId"`
	State       string  `json:"state"`
	Since       string  `json:"since"`
	PauseReason *string `json:"pauseReason"`
}

type liveOrder struct {
	OrderID       int64            `json:"orderId"`
	Agents        []liveAgent      `json:"agents"`
	AgentsByState map[string]int64 `json:"agentsByState"`
	Dialing       *struct {
		CallsInFlight  int     `json:"callsInFlight"`
		AbandonWindow  string  `json:"abandonWindow"`
		MaxAbandonRate float64 `json:"maxAbandonRate"`
	} `json:"dialing"`
}

// liveUntil reads live events until one shows order orderID such that ok holds, within wait.
func liveUntil(t *testing.T, events <-chan sseEvent, wait time.Duration, orderID int64, ok func(liveOrder) bool, what string) liveOrder {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		ev, open := nextEvent(events, "live", time.Until(deadline))
		require.True(t, open, "a live event within %s: %s", wait, what)
		var data struct {
			At     time.Time   `json:"at"`
			Orders []liveOrder `json:"orders"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.data), &data), ev.data)
		for _, o := range data.Orders {
			if o.OrderID == orderID && ok(o) {
				return o
			}
		}
	}
}

func agentIn(o liveOrder, id int64, state string) *liveAgent {
	for i, a := range o.Agents {
		if a.UserID == id && a.State == state {
			return &o.Agents[i]
		}
	}
	return nil
}

// The live stream through the gateway: the telephony platform puts an agent on a call of an order,
// and the stream pushes the order with the agent on the call (user service → agent.state.changed
// → report-worker, and the lead service's dialer for the order's agents and dialing); the agent
// pauses itself through the API and the stream shows that too. The agent's own stream shows it
// alone, without the dialing.
func TestLiveStreamPushesAnAgentsStateThroughTheGateway(t *testing.T) {
	agent := newMember(t, "live.agent@live.e2e", "call-center")
	orderID := createOrder(t, with(minimalOrder("Live stream"), "agentUserIds", []int64{agent.id}))
	staff := openSSE(t, "/v2/report/live/", stack.APIKey)

	platform := newTelephonyPlatform(t)
	at := time.Now().UTC().Truncate(time.Second)
	platform.agent(t, telephony.AgentEvent{EventID: uuid.NewString(), UserID: agent.id, At: at, State: telephony.AgentOnCall, OrderID: &orderID})
	o := liveUntil(t, staff, 30*time.Second, orderID, func(o liveOrder) bool { return agentIn(o, agent.id, telephony.AgentOnCall) != nil },
		"the agent on a call of the order")
	assert.Equal(t, at.Format(time.RFC3339), agentIn(o, agent.id, telephony.AgentOnCall).Since)
	assert.Equal(t, int64(1), o.AgentsByState[telephony.AgentOnCall])
	require.NotNil(t, o.Dialing)
	assert.Equal(t, 0, o.Dialing.CallsInFlight)
	assert.Equal(t, "30d", o.Dialing.AbandonWindow)
	assert.Equal(t, 0.03, o.Dialing.MaxAbandonRate, "the default limit, 3 %")

	mine := openSSE(t, "/v2/report/live/", agent.key)
	r := stack.Call(t, http.MethodPost, "/v2/agent/state/", map[string]any{"state": "paused", "pauseReason": "lunch"}, WithKey(agent.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	o = liveUntil(t, staff, 30*time.Second, orderID, func(o liveOrder) bool { return agentIn(o, agent.id, "paused") != nil },
		"the agent paused, still on the order it worked")
	require.NotNil(t, agentIn(o, agent.id, "paused").PauseReason)
	assert.Equal(t, "lunch", *agentIn(o, agent.id, "paused").PauseReason)

	own := liveUntil(t, mine, 30*time.Second, orderID, func(o liveOrder) bool { return agentIn(o, agent.id, "paused") != nil }, "the agent's own view")
	assert.Len(t, own.Agents, 1)
	assert.Nil(t, own.Dialing, "an agent sees no dialing figures")
}

// reportStreams is the report API's report_live_streams gauge.
func reportStreams(t *testing.T) string {
	t.Helper()
	res, err := http.Get(stack.URL("report") + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "report_live_streams "); ok {
			return v
		}
	}
	return ""
}

// A client that goes away ends its stream at the report API too (the gateway ends the upstream
// request), and SIGTERM ends the open streams at once: the report stops well within its
// shutdown timeout, and the client sees its stream end.
func TestLiveStreamsEndWithTheClientAndOnSigterm(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.BaseURL+"/v2/report/live/", nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", stack.APIKey)
	resp, err := stack.Do(t, req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool { return reportStreams(t) == "1" }, 10*time.Second, 50*time.Millisecond, "the stream is open at the report API")
	cancel()
	resp.Body.Close()
	require.Eventually(t, func() bool { return reportStreams(t) == "0" }, 10*time.Second, 50*time.Millisecond,
		"the client went away: the report API's stream ended")

	events := openSSE(t, "/v2/report/live/", stack.APIKey)
	_, ok := nextEvent(events, "live", 10*time.Second)
	require.True(t, ok, "the first event")
	start := time.Now()
	stack.Stop("report", syscall.SIGTERM)
	stopped := time.Since(start)
	require.NoError(t, stack.Start("report"))
	assert.Less(t, stopped, 5*time.Second, "the open stream does not hold the report's shutdown")
	for deadline := time.After(5 * time.Second); ; {
		select {
		case _, open := <-events:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the client's stream is still open 5 s after the report stopped")
		}
	}
}
