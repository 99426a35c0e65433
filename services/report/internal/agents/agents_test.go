package agents_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"ccplatform/services/report/internal/agents"
	"ccplatform/services/report/internal/orders"
	"ccplatform/services/report/internal/servicetest"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "report_agents", func(e *servicetest.Env) { env = e })
}

func rowsOf[T any](t *testing.T, data json.RawMessage) []T {
	t.Helper()
	var v struct {
		List []T `json:"list"`
	}
	require.NoError(t, json.Unmarshal(data, &v))
	return v.List
}

// An agent's states, announced late, twice and out of order, become the time they spent in each
// state: a late state splits the segment it falls in. Their calls count beside, the handle time
// takes the wrap-up in, and the current state lasts until now. An agent sees only themselves.
func TestAgentStatesAndCallsMakeTheAgentsReport(t *testing.T) {
	pub := env.Consume(t)
	agent := 1_000_000 + rand.Int64N(1_000_000_000)
	order := 1_000_000 + rand.Int64N(1_000_000_000)
	h9 := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	publish := func(id, state, reason string, orderID int64, at time.Time) {
		pub.Publish(t, "agent.state.changed", "agent.state.changed", servicetest.AgentState(id, agent, state, reason, orderID, at))
	}
	// 09:00 available, 09:10 on-call, 09:20 wrap-up, 09:25 available, 09:40 paused (lunch), 10:30 offline;
	// 09:25 arrives last (late), 09:10 twice.
	onCall := uuid.NewString()
	publish(uuid.NewString(), "available", "", order, h9)
	publish(onCall, "on-call", "", order, h9.Add(10*time.Minute))
	publish(uuid.NewString(), "wrap-up", "", order, h9.Add(20*time.Minute))
	publish(onCall, "on-call", "", order, h9.Add(10*time.Minute))
	publish(uuid.NewString(), "paused", "lunch", 0, h9.Add(40*time.Minute))
	publish(uuid.NewString(), "offline", "", 0, h9.Add(90*time.Minute))
	publish(uuid.NewString(), "available", "", order, h9.Add(25*time.Minute))
	// Today, still available since 11:00 (the handler's clock is 12:00).
	publish(uuid.NewString(), "available", "", order, servicetest.Now.Add(-time.Hour))
	pub.Publish(t, "call.finished", "call.finished", servicetest.CallFinished(uuid.NewString(), order, 1, agent, "answered", h9.Add(10*time.Minute), 540))

	path := fmt.Sprintf("/v2/report/agents?userIds[]=%d&from=2026-11-25T09:00:00Z&to=2026-11-25T11:00:00Z&interval=hour", agent)
	var rows []agents.Row
	servicetest.Eventually(t, 10*time.Second, func() bool {
		res := env.Do(t, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, res.Status, res.Message)
		rows = rowsOf[agents.Row](t, res.Data)
		return len(rows) == 2 && rows[0].Calls == 1 && rows[1].PausedSeconds == 1800 && rows[0].AvailableSeconds == 1500
	}, "the states and the call are counted")
	nine := rows[0]
	assert.Equal(t, 1500.0, nine.AvailableSeconds, "09:00-09:10 and 09:25-09:40: the late state split wrap-up")
	assert.Equal(t, 600.0, nine.OnCallSeconds, "the duplicate counts once")
	assert.Equal(t, 300.0, nine.WrapUpSeconds)
	assert.Equal(t, 1200.0, nine.PausedSeconds)
	assert.Equal(t, map[string]float64{"lunch": 1200}, nine.PausedByReason)
	assert.Equal(t, 840.0, nine.AvgHandleSeconds, "540 s of talk and 300 s of wrap-up")
	assert.Equal(t, 0.375, nine.Occupancy, "900 s of 2400 s not paused")
	assert.Equal(t, 1800.0, rows[1].PausedSeconds, "paused until 10:30, then offline, which counts nowhere")

	res := env.Do(t, http.MethodGet, fmt.Sprintf("/v2/report/agents?userIds[]=%d&from=2026-11-26&to=2026-11-27&interval=total", agent), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	today := rowsOf[agents.Row](t, res.Data)
	require.Len(t, today, 1)
	assert.Equal(t, 3600.0, today[0].AvailableSeconds, "the current state lasts until now")

	// The order's report takes the wrap-up into its handle time and the agent time into calls per hour.
	res = env.Do(t, http.MethodGet, fmt.Sprintf("/v2/report/orders?orderIds[]=%d&from=2026-11-25T09:00:00Z&to=2026-11-25T10:00:00Z&interval=total", order), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	ord := rowsOf[orders.Row](t, res.Data)
	require.Len(t, ord, 1)
	assert.Equal(t, 840.0, ord[0].AvgHandleSeconds)
	assert.Equal(t, 1.5, ord[0].CallsPerAgentHour, "one call in 40 minutes of agent time announced with the order")

	other := env.As("5", "call-center").Do(t, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, other.Status, other.Message)
	assert.Empty(t, rowsOf[agents.Row](t, other.Data), "another agent's figures are not theirs to see")
	self := env.As(fmt.Sprint(agent), "call-center").Do(t, http.MethodGet, "/v2/report/agents?from=2026-11-25T09:00:00Z&to=2026-11-25T10:00:00Z&interval=total", nil)
	require.Equal(t, http.StatusOK, self.Status, self.Message)
	mine := rowsOf[agents.Row](t, self.Data)
	require.Len(t, mine, 1)
	assert.Equal(t, agent, mine[0].UserID)

	csv := env.Raw(t, http.MethodGet, path, nil, "Accept", "text/csv")
	require.Equal(t, http.StatusOK, csv.Code)
	assert.Contains(t, csv.Body.String(), "userId,from,to,calls,talkSeconds,avgHandleSeconds,availableSeconds,ringingSeconds,onCallSeconds,wrapUpSeconds,pausedSeconds,occupancy,paused_lunch\n")
}

// A client sees the agents' figures in its own orders only.
func TestAClientSeesAgentsInItsOrdersOnly(t *testing.T) {
	env.Peers.SetOrders(901, 1)
	res := env.As("901", "client").Do(t, http.MethodGet, "/v2/report/agents?orderIds[]=2&from=2026-11-25&to=2026-11-26&interval=day", nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Empty(t, rowsOf[agents.Row](t, res.Data))
}
