package dialer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/orders"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// staffed is newOrder with agents: the user service's answer for them is put into the agent cache.
func staffed(t *testing.T, change func(*orders.Order), list ...agents.Agent) orders.Order {
	t.Helper()
	var users []int64
	for _, a := range list {
		users = append(users, a.UserID)
	}
	o := newOrder(t, func(o *orders.Order) {
		o.AgentUserIDs, o.AgentGroupIDs = users, []int64{}
		if change != nil {
			change(o)
		}
	})
	env.Agents.Remember(o.AgentUserIDs, o.AgentGroupIDs, list)
	return o
}

var agentSeq = 100

func agent(state, phoneMode string) agents.Agent {
	agentSeq++
	since := monday.Add(-time.Hour)
	return agents.Agent{UserID: int64(agentSeq), State: state, Since: &since, PhoneMode: phoneMode}
}

type paced struct {
	leased
	DialLevel    *float64 `json:"dialLevel"`
	RetryAfterMs *int64   `json:"retryAfterMs"`
}

// pacedLease leases without a limit.
func pacedLease(t *testing.T, o orders.Order) paced {
	t.Helper()
	res := env.Do(t, http.MethodPost, "/v2/dialer/lease", map[string]any{"orderId": o.ID, "dialerId": "paced"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var out paced
	require.NoError(t, json.Unmarshal(res.Data, &out))
	return out
}

// A paced lease hands out one lead per available agent less the calls in flight (the leads under
// a live lease), and nothing, with when to ask again, once every agent has a call.
func TestAPacedLeaseCountsTheCallsInFlight(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	elsewhere := agent("on-call", "manual")
	other := int64(999999)
	elsewhere.OrderID = &other // on another order's call: none of this order's is with an agent
	o := staffed(t, nil, agent("available", "manual"), agent("available", "manual"), agent("available", "manual"),
		elsewhere, agent("offline", "manual"))
	for range 10 {
		insert(t, o, row{offset: offset(3)})
	}
	first := pacedLease(t, o)
	assert.Len(t, first.List, 3, "three available agents, nothing in flight")
	require.NotNil(t, first.DialLevel)
	assert.Equal(t, 0.75, *first.DialLevel, "three lines for the four agents logged in")
	require.NotNil(t, first.RetryAfterMs)
	assert.Equal(t, int64(1000), *first.RetryAfterMs)

	second := pacedLease(t, o)
	assert.Empty(t, second.List, "three calls in flight for three agents")
	assert.Nil(t, second.LeaseID)
	require.NotNil(t, second.RetryAfterMs)
	assert.Equal(t, int64(1000), *second.RetryAfterMs)

	// A call event ends one call: one agent's line is free again.
	rules, err := callresult.RulesOf(o)
	require.NoError(t, err)
	_, err = callresult.NewStore(env.DB, env.Catalog).Apply(context.Background(), []callresult.Item{{Rules: rules,
		Event: callresult.Finished{EventID: uuid.NewString(), CallID: 920000 + first.List[0].ID, LeadID: first.List[0].ID,
			OrderID: o.ID, Outcome: callresult.OutcomeNoAnswer, EndedAt: monday, Outgoing: true}}})
	require.NoError(t, err)
	assert.Len(t, pacedLease(t, o).List, 1)

	explicit := lease(t, o, 2)
	assert.Len(t, explicit.List, 2, "an explicit limit is the dialer's decision")
}

func TestAPacedLeaseHandsOutNothingWhileEveryAgentIsBusy(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := staffed(t, nil, agent("on-call", "manual"), agent("wrap-up", "manual"), agent("paused", "manual"))
	insert(t, o, row{offset: offset(3)})
	got := pacedLease(t, o)
	assert.Empty(t, got.List)
	assert.Nil(t, got.LeaseID)
	require.NotNil(t, got.RetryAfterMs)
	assert.Positive(t, *got.RetryAfterMs)

	none := newOrder(t, nil) // no agents at all
	insert(t, none, row{offset: offset(3)})
	assert.Empty(t, pacedLease(t, none).List)
}

// A predictive order counts only the agents whose phoneMode is predictive.
func TestAPredictiveLeaseCountsOnlyPredictiveAgents(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := staffed(t, func(o *orders.Order) { o.PacingMode, o.PredictiveModeEnabled = "predictive", true },
		agent("available", "predictive"), agent("available", "predictive"), agent("available", "manual"))
	for range 5 {
		insert(t, o, row{offset: offset(3)})
	}
	assert.Len(t, pacedLease(t, o).List, 2)
}

func TestALeaseLimitIsAnIntegerOrLeftOut(t *testing.T) {
	for body, want := range map[string]string{
		`{"orderId": 1, "dialerId": "d", "limit": null}`:  "must be an integer from 1 to 100, or left out for a paced lease",
		`{"orderId": 1, "dialerId": "d", "limit": 0}`:     "must be an integer from 1 to 100",
		`{"orderId": 1, "dialerId": "d", "limit": 101}`:   "must be an integer from 1 to 100",
		`{"orderId": 1, "dialerId": "d", "limit": "all"}`: "must be an integer",
	} {
		res := env.Do(t, http.MethodPost, "/v2/dialer/lease", body)
		assert.Equal(t, http.StatusBadRequest, res.Status, body)
		assert.False(t, res.Success)
		assert.Contains(t, res.Errors()["limit"]+res.Message, want, body)
	}
}

type paceView struct {
	Mode                  string           `json:"mode"`
	DialLevel             float64          `json:"dialLevel"`
	Agents                map[string]int64 `json:"agents"`
	CallsInFlight         int              `json:"callsInFlight"`
	AnswerRate            *float64         `json:"answerRate"`
	HandleTimeMeanSeconds *float64         `json:"handleTimeMeanSeconds"`
	HandleTimeP90Seconds  *float64         `json:"handleTimeP90Seconds"`
	Abandon24h            struct {
		Abandoned   int64    `json:"abandoned"`
		Live        int64    `json:"live"`
		RatePercent *float64 `json:"ratePercent"`
	} `json:"abandon24h"`
	Abandon30d struct {
		Abandoned int64 `json:"abandoned"`
		Live      int64 `json:"live"`
	} `json:"abandon30d"`
	PredictiveSuspended bool    `json:"predictiveSuspended"`
	SuspendedReason     *string `json:"suspendedReason"`
}

func pace(t *testing.T, o orders.Order) paceView {
	t.Helper()
	res := env.Do(t, http.MethodGet, "/v2/dialer/pace/"+strconv.FormatInt(o.ID, 10), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var v paceView
	require.NoError(t, json.Unmarshal(res.Data, &v))
	return v
}

// calls applies finished outgoing calls of fresh leads of o (outcome and talk seconds), ended at
// the times given.
func calls(t *testing.T, o orders.Order, ended []time.Time, outcomes []string, talks []int64) {
	t.Helper()
	rules, err := callresult.RulesOf(o)
	require.NoError(t, err)
	var items []callresult.Item
	for i := range outcomes {
		id := insert(t, o, row{offset: offset(3)})
		items = append(items, callresult.Item{Rules: rules, Event: callresult.Finished{EventID: uuid.NewString(),
			CallID: 930000 + id, LeadID: id, OrderID: o.ID, Outcome: outcomes[i], EndedAt: ended[i], Outgoing: true,
			Answered:    outcomes[i] == callresult.OutcomeAnswered || outcomes[i] == callresult.OutcomeAbandoned,
			TalkSeconds: talks[i]}})
	}
	_, err = callresult.NewStore(env.DB, env.Catalog).Apply(context.Background(), items)
	require.NoError(t, err)
}

func TestThePaceShowsTheOrdersFigures(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := staffed(t, func(o *orders.Order) { o.PacingMode = "predictive" },
		agent("available", "manual"), agent("available", "manual"), agent("on-call", "manual"))
	recent, day, month := monday.Add(-10*time.Minute), monday.Add(-5*time.Hour), monday.Add(-10*24*time.Hour)
	calls(t, o, []time.Time{recent, recent, recent, recent, recent, day, month, month},
		[]string{"answered", "answered", "answered", "abandoned", "no_answer", "abandoned", "abandoned", "answered"},
		[]int64{60, 120, 300, 2, 0, 3, 3, 30})
	insert(t, o, row{offset: offset(3)})
	require.Len(t, lease(t, o, 1).List, 1)

	p := pace(t, o)
	assert.Equal(t, "predictive", p.Mode)
	assert.Equal(t, map[string]int64{"available": 2, "on-call": 1}, p.Agents)
	assert.Equal(t, 1, p.CallsInFlight)
	require.NotNil(t, p.AnswerRate)
	assert.InDelta(t, 0.8, *p.AnswerRate, 1e-9, "4 of the 5 calls of the last hour were answered by a person")
	require.NotNil(t, p.HandleTimeMeanSeconds)
	assert.InDelta(t, 127.5, *p.HandleTimeMeanSeconds, 1e-9, "60, 120, 300 and 30 s")
	require.NotNil(t, p.HandleTimeP90Seconds)
	assert.Equal(t, 300.0, *p.HandleTimeP90Seconds)
	assert.Equal(t, int64(2), p.Abandon24h.Abandoned)
	assert.Equal(t, int64(5), p.Abandon24h.Live)
	require.NotNil(t, p.Abandon24h.RatePercent)
	assert.InDelta(t, 40, *p.Abandon24h.RatePercent, 1e-9)
	assert.Equal(t, int64(3), p.Abandon30d.Abandoned)
	assert.Equal(t, int64(7), p.Abandon30d.Live)
	assert.True(t, p.PredictiveSuspended, "predictive asked, predictiveModeEnabled off")
	require.NotNil(t, p.SuspendedReason)
	assert.Contains(t, *p.SuspendedReason, "predictiveModeEnabled")

	metrics := env.Raw(t, http.MethodGet, "/metrics", nil).Body.String()
	id := strconv.FormatInt(o.ID, 10)
	assert.Contains(t, metrics, `dialer_calls_in_flight{order_id="`+id+`"} 1`+"\n")
	assert.Contains(t, metrics, `dialer_dial_level{order_id="`+id+`"} 0.6666666666666666`+"\n", "two lines for three agents")
	assert.Contains(t, metrics, `dialer_abandon_rate{order_id="`+id+`",window="24h"} 0.4`+"\n")
	assert.Contains(t, metrics, `dialer_abandon_rate_of_limit{order_id="`+id+`"} 14.28571428571428`, "3 of 7 over 30 days, against 3 %")

	empty := pace(t, staffed(t, nil))
	assert.Nil(t, empty.AnswerRate, "nothing dialed yet")
	assert.Nil(t, empty.HandleTimeMeanSeconds)
	assert.Nil(t, empty.Abandon24h.RatePercent)
	assert.False(t, empty.PredictiveSuspended)
	assert.Equal(t, "progressive", empty.Mode, "the default mode")
}

// A missing order and another client's order are a 404 through the whole stack (gateway/e2e,
// TestDialerPace): here the order service is not running.
func TestPaceAndExplainRefuseABadOrderID(t *testing.T) {
	for _, path := range []string{"/v2/dialer/pace/", "/v2/dialer/explain/"} {
		res := env.Do(t, http.MethodGet, path+"abc", nil)
		assert.Equal(t, http.StatusBadRequest, res.Status, path)
		assert.Equal(t, map[string]string{"orderId": "must be an integer > 0"}, res.Errors())
	}
}

// Paced leases of one order at the same moment count each other's calls: together they dial what
// one decision allows (three agents: three calls), not that many times over.
func TestConcurrentPacedLeasesDialForTheAgentsOnce(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := staffed(t, nil, agent("available", "manual"), agent("available", "manual"), agent("available", "manual"))
	for range 30 {
		insert(t, o, row{offset: offset(3)})
	}
	const dialers = 8
	var wg sync.WaitGroup
	var leasedTotal atomic.Int64
	start := make(chan struct{})
	for range dialers {
		wg.Go(func() {
			<-start
			res := env.Do(t, http.MethodPost, "/v2/dialer/lease", map[string]any{"orderId": o.ID, "dialerId": "race"})
			if !assert.Equal(t, http.StatusOK, res.Status, res.Message) {
				return
			}
			var out paced
			if assert.NoError(t, json.Unmarshal(res.Data, &out)) {
				leasedTotal.Add(int64(len(out.List)))
			}
		})
	}
	close(start)
	wg.Wait()
	assert.Equal(t, int64(3), leasedTotal.Load())
}

// The live figures of an order are the pace's calls in flight and dial level, with its answer and
// abandon rates over the last 15 minutes and over its abandon window.
func TestTheLiveFiguresOfOrders(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	reason := "lunch"
	paused := agent("paused", "manual")
	paused.PauseReason = &reason
	staff := []agents.Agent{agent("available", "manual"), agent("available", "manual"), agent("on-call", "manual"), paused, agent("offline", "manual")}
	o := staffed(t, func(o *orders.Order) { o.AbandonWindow = "24h"; o.MaxAbandonRatePercent = 5 }, staff...)
	recent, older, day := monday.Add(-10*time.Minute), monday.Add(-40*time.Minute), monday.Add(-5*time.Hour)
	calls(t, o, []time.Time{recent, recent, recent, recent, older, day},
		[]string{"answered", "answered", "abandoned", "no_answer", "abandoned", "answered"}, []int64{60, 120, 2, 0, 2, 30})
	insert(t, o, row{offset: offset(3)})
	require.Len(t, lease(t, o, 1).List, 1)

	res := env.Do(t, http.MethodPost, "/internal/dialer/live", map[string]any{"orderIds": []int64{o.ID}})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var out struct {
		List []map[string]any `json:"list"`
	}
	require.NoError(t, json.Unmarshal(res.Data, &out))
	require.Len(t, out.List, 1)
	since := monday.Add(-time.Hour).Format(time.RFC3339)
	var shown []string
	for _, a := range out.List[0]["agents"].([]any) {
		m := a.(map[string]any)
		assert.Equal(t, since, m["since"])
		shown = append(shown, fmt.Sprintf("%v %v %v", m["userId"], m["state"], m["pauseReason"]))
	}
	assert.Equal(t, []string{fmt.Sprintf("%d available <nil>", staff[0].UserID), fmt.Sprintf("%d available <nil>", staff[1].UserID),
		fmt.Sprintf("%d on-call <nil>", staff[2].UserID), fmt.Sprintf("%d paused lunch", staff[3].UserID)}, shown, "every agent but the offline one")
	delete(out.List[0], "agents")
	assert.Equal(t, map[string]any{"orderId": float64(o.ID), "callsInFlight": 1.0, "dialLevel": 0.6667,
		"answerRate15m": 0.75, "abandonRate15m": 0.3333, "abandonWindow": "24h", "abandonRateWindow": 0.4, "maxAbandonRate": 0.05},
		round(out.List[0]), "3 of 4 answered and 1 of those 3 abandoned in 15 minutes; 2 of 5 live calls abandoned in 24 h")

	bad := env.Do(t, http.MethodPost, "/internal/dialer/live", map[string]any{"orderIds": []int64{0}})
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Equal(t, map[string]string{"orderIds": "must be integers > 0"}, bad.Errors())
}

// round rounds the dial level, the one figure not rounded by the answer.
func round(m map[string]any) map[string]any {
	if v, ok := m["dialLevel"].(float64); ok {
		m["dialLevel"] = float64(int64(v*10000+0.5)) / 10000
	}
	return m
}
