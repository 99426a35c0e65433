package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"github.com/google/uuid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

type orderReportRow struct {
	OrderID     int64            `json:"orderId"`
	From        string           `json:"from"`
	Calls       int64            `json:"calls"`
	Answered    int64            `json:"answered"`
	Abandoned   int64            `json:"abandoned"`
	TalkSeconds int64            `json:"talkSeconds"`
	LeadsCalled int64            `json:"leadsCalled"`
	Statuses    map[string]int64 `json:"statuses"`
}

// Calls the telephony platform reports travel call-ingest → call.finished → the report service's
// aggregates, and the orders report through the gateway counts them once, in the day (of the
// caller's zone) they started in, with the other days of the period at zero; as CSV too.
func TestOrdersReportCountsThePlatformsCalls(t *testing.T) {
	platform := newTelephonyPlatform(t)
	const order, lead1, lead2 = 930001, 930011, 930012
	moscow := time.FixedZone("MSK", 3*3600)
	day := time.Date(2026, 11, 18, 0, 0, 0, 0, moscow)
	a := platformCall(lead1, order, 5, telephony.StatusAnswered, telephony.DirectionOutgoing, day.Add(10*time.Hour), 60*time.Second)
	aAgain := a
	aAgain.EventID = a.EventID + "-again"
	b := platformCall(lead2, order, 5, telephony.StatusAbandoned, telephony.DirectionOutgoing, day.Add(23*time.Hour+30*time.Minute), 0)
	c := platformCall(lead1, order, 6, telephony.StatusNoAnswer, telephony.DirectionOutgoing, day.Add(24*time.Hour+time.Hour), 0)
	for _, ev := range []telephony.CallEvent{a, aAgain, b, c} {
		platform.send(t, ev)
	}

	path := "/v2/report/orders/?orderIds[]=930001&from=2026-11-17&to=2026-11-20&interval=day&tz=Europe/Moscow"
	var rows []orderReportRow
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := stack.Call(t, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var data struct {
			List []orderReportRow `json:"list"`
		}
		require.NoError(t, json.Unmarshal(r.Env.Data, &data))
		rows = data.List
		var calls int64
		for _, row := range rows {
			calls += row.Calls
		}
		if calls >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Len(t, rows, 3)
	assert.Equal(t, "2026-11-17T00:00:00+03:00", rows[0].From)
	assert.Equal(t, int64(0), rows[0].Calls, "a day without calls is zeros")
	assert.Equal(t, int64(2), rows[1].Calls, "the call reported twice counts once")
	assert.Equal(t, int64(2), rows[1].Answered)
	assert.Equal(t, int64(1), rows[1].Abandoned)
	assert.Equal(t, int64(60), rows[1].TalkSeconds)
	assert.Equal(t, int64(2), rows[1].LeadsCalled)
	assert.Equal(t, int64(1), rows[2].Calls, "01:20 in Moscow is the next day")
	assert.Len(t, rows[0].Statuses, 9, "every status of the lead service's catalog")

	records := stack.CSV(t, path)
	require.Len(t, records, 4, "a header and three days")
	assert.Equal(t, []string{"orderId", "from", "to", "calls"}, records[0][:4])
	assert.Equal(t, []string{"930001", "2026-11-18T00:00:00+03:00", "2026-11-19T00:00:00+03:00", "2", "2"}, records[2][:5])

	r := stack.Call(t, http.MethodGet, "/v2/report/orders/?from=2026-10-01&to=2026-11-20&interval=hour", nil)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Env.Message, "to: must be at most 31 days after from at interval hour")
}

// agent.state.changed as the user service announces it (published here: the shape is the one
// agreed with it) reaches the agents report through the gateway: time in each state, by the
// segments the history makes, in the caller's hours.
func TestAgentsReportCountsTheAnnouncedStates(t *testing.T) {
	conn := mq.Dial(stack.AMQPURL, "e2e-user-service", zap.NewNop(), mq.EventExchange(event.Exchange))
	pub := mq.NewPublisher(conn)
	t.Cleanup(func() { pub.Close(); conn.Close() })
	const agent = 940001
	h := time.Date(2026, 11, 18, 7, 0, 0, 0, time.UTC)
	announce := func(state string, reason any, at time.Time) {
		data, err := json.Marshal(map[string]any{"userId": agent, "state": state, "pauseReason": reason, "orderId": nil,
			"at": at.Format(time.RFC3339), "previousState": nil, "previousAt": nil})
		require.NoError(t, err)
		ev := event.Event{ID: uuid.NewString(), Type: "agent.state.changed", OccurredAt: at.Format(time.RFC3339), Data: data}
		msg, err := ev.Message()
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		require.NoError(t, pub.Publish(ctx, event.Exchange, ev.Type, msg))
	}
	announce("available", nil, h)
	announce("paused", "training", h.Add(45*time.Minute))
	announce("offline", nil, h.Add(75*time.Minute))

	path := "/v2/report/agents/?userIds[]=940001&from=2026-11-18T10:00:00%2B03:00&to=2026-11-18T12:00:00%2B03:00&interval=hour&tz=Europe/Moscow"
	var rows []map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := stack.Call(t, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var data struct {
			List []map[string]any `json:"list"`
		}
		require.NoError(t, json.Unmarshal(r.Env.Data, &data))
		rows = data.List
		if len(rows) == 2 && rows[1]["pausedSeconds"] == 900.0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Len(t, rows, 2)
	assert.Equal(t, "2026-11-18T10:00:00+03:00", rows[0]["from"])
	assert.Equal(t, 2700.0, rows[0]["availableSeconds"])
	assert.Equal(t, 900.0, rows[0]["pausedSeconds"])
	assert.Equal(t, map[string]any{"training": 900.0}, rows[1]["pausedByReason"])
}
