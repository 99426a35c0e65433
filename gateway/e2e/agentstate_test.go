package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type agentStateView struct {
	UserID      int64   `json:"userId"`
	State       string  `json:"state"`
	Since       *string `json:"since"`
	PauseReason *string `json:"pauseReason"`
	Orders      []int64 `json:"orders"`
}

func agentStates(t *testing.T, path string, opts ...Option) []agentStateView {
	t.Helper()
	r := stack.Call(t, http.MethodGet, path, nil, opts...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var page struct {
		List []agentStateView `json:"list"`
	}
	require.NoError(t, json.Unmarshal(r.Env.Data, &page))
	return page.List
}

// The telephony platform reports agents' states on telephony.agents, late, twice and out of order;
// the API shows each agent's newest, with the orders it may take, and agents set their own.
func TestAgentStatesFromThePlatformAndFromAgents(t *testing.T) {
	agent := newMember(t, "agent.state@agents.e2e", "call-center")
	other := newMember(t, "agent.other@agents.e2e", "call-center")
	orderID := createOrder(t, with(minimalOrder("Agent states"), "agentUserIds", []int64{agent.id}))

	platform := newTelephonyPlatform(t)
	send := func(ev telephony.AgentEvent) { platform.agent(t, ev) }
	at := time.Now().UTC().Truncate(time.Second).Add(-time.Minute)
	newest := telephony.AgentEvent{EventID: uuid.NewString(), UserID: agent.id, At: at.Add(30 * time.Second), State: telephony.AgentOnCall, OrderID: &orderID}
	send(newest)
	send(newest)                                                                                                     // twice
	send(telephony.AgentEvent{EventID: uuid.NewString(), UserID: agent.id, At: at, State: telephony.AgentAvailable}) // late

	path := fmt.Sprintf("/v2/agent/state/?userIds[]=%d", agent.id)
	var got []agentStateView
	require.Eventually(t, func() bool {
		got = agentStates(t, path)
		return len(got) == 1 && got[0].State == telephony.AgentOnCall
	}, 20*time.Second, 100*time.Millisecond, "the platform's event is applied")
	// The late event was published after the newest: once a marker published after both is
	// applied (one queue, in order), the late one was too, and changed nothing.
	send(telephony.AgentEvent{EventID: uuid.NewString(), UserID: other.id, At: at, State: telephony.AgentWrapUp})
	require.Eventually(t, func() bool {
		o := agentStates(t, "/v2/agent/state/?userIds[]="+strconv.FormatInt(other.id, 10))
		return len(o) == 1 && o[0].State == telephony.AgentWrapUp
	}, 20*time.Second, 100*time.Millisecond)
	got = agentStates(t, path)
	require.Len(t, got, 1)
	assert.Equal(t, telephony.AgentOnCall, got[0].State)
	require.NotNil(t, got[0].Since)
	assert.Equal(t, newest.At.Format("2006-01-02T15:04:05-07:00"), *got[0].Since)
	assert.Equal(t, []int64{orderID}, got[0].Orders, "the orders it may take")

	// An agent pauses itself, and may not set another's state.
	r := stack.Call(t, http.MethodPost, "/v2/agent/state/", map[string]any{"state": "paused", "pauseReason": "lunch"}, WithKey(agent.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "paused", r.Data(t)["state"])
	r = stack.Call(t, http.MethodPost, "/v2/agent/state/", map[string]any{"state": "available", "userId": other.id}, WithKey(agent.key))
	assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	mine := agentStates(t, "/v2/agent/state/", WithKey(agent.key))
	require.Len(t, mine, 1, "an agent sees itself only")
	assert.Equal(t, agent.id, mine[0].UserID)
	assert.Equal(t, "paused", mine[0].State)
	assert.Equal(t, "lunch", *mine[0].PauseReason)
	stranger := newMember(t, "agent.stranger@agents.e2e", "call-center")
	never := agentStates(t, "/v2/agent/state/?userIds[]="+strconv.FormatInt(stranger.id, 10))
	require.Len(t, never, 1)
	assert.Equal(t, "offline", never[0].State, "never reported")
	assert.Nil(t, never[0].Since)
}
