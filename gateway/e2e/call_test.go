package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// telephonyPlatform publishes call and agent state events to the stack's broker as the telephony
// platform does.
type telephonyPlatform struct {
	conn *mq.Conn
	pub  *mq.Publisher
}

func newTelephonyPlatform(t *testing.T) *telephonyPlatform {
	t.Helper()
	conn := mq.Dial(stack.AMQPURL, "e2e-telephony-platform", zap.NewNop(), mq.WorkQueue(telephony.Queue), mq.WorkQueue(telephony.AgentsQueue))
	p := &telephonyPlatform{conn: conn, pub: mq.NewPublisher(conn)}
	t.Cleanup(func() { p.pub.Close(); conn.Close() })
	return p
}

func (p *telephonyPlatform) publish(t *testing.T, id string, body []byte) {
	t.Helper()
	p.publishTo(t, telephony.Queue, telephony.EventType, id, body)
}

func (p *telephonyPlatform) publishTo(t *testing.T, queue, typ, id string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, p.pub.Publish(ctx, "", queue, mq.Message{ID: id, Type: typ, Body: body}))
}

// agent reports an agent's state on telephony.agents.
func (p *telephonyPlatform) agent(t *testing.T, ev telephony.AgentEvent) {
	t.Helper()
	body, err := json.Marshal(ev)
	require.NoError(t, err)
	p.publishTo(t, telephony.AgentsQueue, telephony.AgentEventType, ev.EventID, body)
}

func (p *telephonyPlatform) send(t *testing.T, ev telephony.CallEvent) {
	t.Helper()
	body, err := json.Marshal(ev)
	require.NoError(t, err)
	p.publish(t, ev.EventID, body)
}

type callPage struct {
	List  []map[string]any `json:"list"`
	Next  int              `json:"next"`
	Total int              `json:"total"`
}

func listCalls(t *testing.T, query string) callPage {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/call/?"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", query, r.Body)
	require.True(t, r.Env.Success)
	var p callPage
	require.NoError(t, json.Unmarshal(r.Env.Data, &p))
	return p
}

// waitForCalls polls the list until it holds want calls.
func waitForCalls(t *testing.T, query string, want int) callPage {
	t.Helper()
	var p callPage
	deadline := time.Now().Add(30 * time.Second)
	for {
		p = listCalls(t, query)
		if p.Total >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Equal(t, want, p.Total, "calls of %s", query)
	return p
}

func callIDs(p callPage) []int64 {
	out := make([]int64, len(p.List))
	for i, c := range p.List {
		out[i] = int64(c["id"].(float64))
	}
	return out
}

func platformCall(lead, order, user int64, status, direction string, started time.Time, talk time.Duration) telephony.CallEvent {
	ended := started.Add(20*time.Second + talk)
	ev := telephony.CallEvent{
		EventID: uuid.NewString(), PlatformCallID: "e2e-" + uuid.NewString(),
		LeadID: lead, OrderID: order, UserID: user, SipEndpointID: 2,
		Direction: direction, StatusCode: status, ClientPhone: fmt.Sprintf("+7999%07d", lead),
		StartedAt: started, EndedAt: ended,
	}
	if talk > 0 {
		answered := started.Add(20 * time.Second)
		by := telephony.FinishedByClient
		ev.AnsweredAt, ev.AgentConnectedAt, ev.FinishInitiator, ev.HasRecords = &answered, &answered, &by, true
	}
	return ev
}

func TestCallsFromThePlatformAreReadThroughTheGateway(t *testing.T) {
	platform := newTelephonyPlatform(t)
	const lead1, lead2, order1, order2 = 910001, 910002, 920001, 920002
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	a := platformCall(lead1, order1, 5, telephony.StatusAnswered, telephony.DirectionOutgoing, day.Add(9*time.Hour), 50*time.Second)
	a.IsPredictive = true
	b := platformCall(lead1, order1, 6, telephony.StatusNoAnswer, telephony.DirectionOutgoing, day.Add(10*time.Hour), 0)
	c := platformCall(lead2, order1, 5, telephony.StatusBusy, telephony.DirectionIncoming, time.Date(2026, 11, 20, 11, 0, 0, 0, time.FixedZone("MSK", 3*3600)), 0)
	d := platformCall(lead2, order2, 6, telephony.StatusAnswered, telephony.DirectionOutgoing, day.Add(33*time.Hour), 5*time.Minute)
	aAgain := a
	aAgain.EventID = uuid.NewString()

	platform.send(t, a)
	platform.send(t, aAgain) // the same call reported twice
	platform.publish(t, "e2e-garbage", []byte("not an event"))
	platform.send(t, b)
	platform.send(t, c)
	platform.send(t, d)

	both := fmt.Sprintf("orderIds[]=%d&orderIds[]=%d", order1, order2)
	all := waitForCalls(t, both, 4)
	byLead := map[float64][]int64{}
	for _, call := range all.List {
		byLead[call["leadId"].(float64)] = append(byLead[call["leadId"].(float64)], int64(call["id"].(float64)))
	}
	// Newest first: d (21st 09:00), b (20th 10:00), a (20th 09:00), c (20th 08:00 UTC).
	idD, idB, idA, idC := byLead[lead2][0], byLead[lead1][0], byLead[lead1][1], byLead[lead2][1]
	assert.Equal(t, []int64{idD, idB, idA, idC}, callIDs(all))
	assert.Equal(t, 4, all.Next)

	q := func(format string, args ...any) string { return fmt.Sprintf(format, args...) }
	cases := map[string]struct {
		query string
		want  []int64
	}{
		"one lead":            {q("leadIds[]=%d", lead1), []int64{idB, idA}},
		"two leads":           {q("leadIds[]=%d&leadIds[]=%d", lead1, lead2), []int64{idD, idB, idA, idC}},
		"one order":           {q("orderIds[]=%d", order1), []int64{idB, idA, idC}},
		"lead and order":      {q("leadIds[]=%d&orderIds[]=%d", lead2, order2), []int64{idD}},
		"lead of other order": {q("leadIds[]=%d&orderIds[]=%d", lead1, order2), []int64{}},
		"user":                {q("orderIds[]=%d&userIds[]=5", order1), []int64{idA, idC}},
		"statuses":            {q("%s&statusIds[]=2&statusIds[]=3", both), []int64{idB, idC}},
		"answered status":     {q("%s&statusIds[]=1", both), []int64{idD, idA}},
		"period, both ends":   {q("%s&createdAt[0]=2026-11-20T09:00:00Z&createdAt[1]=2026-11-20T10:00:00Z", both), []int64{idB, idA}},
		"period from a day":   {q("%s&createdAt[0]=2026-11-21", both), []int64{idD}},
		"period to a day":     {q("%s&createdAt[1]=2026-11-20", both), []int64{idB, idA, idC}},
		"period with offset":  {q("%s&createdAt[1]=%s", both, url.QueryEscape("2026-11-20T11:00:00+03:00")), []int64{idC}},
		"unknown lead":        {"leadIds[]=999999999", []int64{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := listCalls(t, tc.query)
			assert.Equal(t, tc.want, callIDs(p))
			assert.Equal(t, len(tc.want), p.Total)
			assert.Equal(t, len(tc.want), p.Next)
		})
	}

	t.Run("pages", func(t *testing.T) {
		p := listCalls(t, both+"&offset=1&limit=2")
		assert.Equal(t, []int64{idB, idA}, callIDs(p))
		assert.Equal(t, 3, p.Next)
		assert.Equal(t, 4, p.Total)
		p = listCalls(t, both+"&offset=3&limit=2")
		assert.Equal(t, []int64{idC}, callIDs(p))
		assert.Equal(t, 4, p.Next)
		r := stack.Call(t, http.MethodGet, "/v2/call?"+both, nil)
		assert.Equal(t, http.StatusOK, r.Status, "the path without the trailing slash works too")
	})

	t.Run("detail", func(t *testing.T) {
		for _, path := range []string{"/v2/call/detail/%d/", "/v2/call/detail/%d"} {
			r := stack.Call(t, http.MethodGet, fmt.Sprintf(path, idA), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			assert.JSONEq(t, fmt.Sprintf(`{"id":%d,"sipEndpointId":2,"finishInitiator":"client","direction":"outgoing",
				"leadId":%d,"userId":5,"orderId":%d,"statusId":1,"totalDurationSeconds":70,"waitTimeDurationSeconds":20,
				"talkTimeDurationSeconds":50,"isPredictive":true,"clientPhone":"79990910001","hasRecords":true,
				"createdAt":"2026-11-20T09:00:00+00:00"}`, idA, lead1, order1), string(r.Env.Data))
			assert.Empty(t, r.Env.Message)
		}
		r := stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/call/detail/%d/", idC), nil)
		require.Equal(t, http.StatusOK, r.Status)
		call := r.Data(t)
		assert.Nil(t, call["finishInitiator"])
		assert.Equal(t, "incoming", call["direction"])
		assert.Equal(t, "2026-11-20T08:00:00+00:00", call["createdAt"], "times are returned in UTC")
		assert.Equal(t, []any{20.0, 20.0, 0.0}, []any{call["totalDurationSeconds"], call["waitTimeDurationSeconds"], call["talkTimeDurationSeconds"]})
	})

	t.Run("errors", func(t *testing.T) {
		r := stack.Call(t, http.MethodGet, "/v2/call/", nil)
		assert.Equal(t, http.StatusBadRequest, r.Status)
		assert.False(t, r.Env.Success)
		assert.Contains(t, r.Env.Message, "leadIds[]")
		assert.Contains(t, r.Env.Message, "orderIds[]")
		errs := r.Errors(t)
		assert.Contains(t, errs, "leadIds[]")
		assert.Contains(t, errs, "orderIds[]")
		for query, field := range map[string]string{
			"leadIds[]=0":                     "leadIds[]",
			"orderIds[]=x":                    "orderIds[]",
			"orderIds[]=1&userIds[]=-1":       "userIds[]",
			"orderIds[]=1&statusIds[]=0":      "statusIds[]",
			"orderIds[]=1&limit=101":          "limit",
			"orderIds[]=1&offset=-1":          "offset",
			"orderIds[]=1&createdAt[0]=later": "createdAt[0]",
		} {
			r := stack.Call(t, http.MethodGet, "/v2/call/?"+query, nil)
			assert.Equal(t, http.StatusBadRequest, r.Status, query)
			assert.Contains(t, r.Errors(t), field, query)
		}
		for _, bad := range []string{"0", "-3", "abc"} {
			r := stack.Call(t, http.MethodGet, "/v2/call/detail/"+bad+"/", nil)
			assert.Equal(t, http.StatusBadRequest, r.Status, bad)
		}
		r = stack.Call(t, http.MethodGet, "/v2/call/detail/987654321/", nil)
		assert.Equal(t, http.StatusNotFound, r.Status)
		assert.Equal(t, "[]", string(r.Env.Data))
		r = stack.Call(t, http.MethodGet, "/v2/call/?"+both, nil, WithKey(""))
		assert.Equal(t, http.StatusUnauthorized, r.Status)
	})

	t.Run("the undecodable event went to the dead-letter queue", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, messages, err := platform.conn.QueueConsumers(ctx, telephony.Queue+mq.DeadLetterSuffix)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, messages, 1)
		consumers, _, err := platform.conn.QueueConsumers(ctx, telephony.Queue)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, consumers, 1, "call-ingest consumes the platform's queue")
	})
}

// leadsOfOrder makes real leads for an order through the public API.
func leadsOfOrder(t *testing.T, orderID int64, phones []string) map[int64]string {
	t.Helper()
	leads := map[int64]string{}
	code := orderDetail(t, orderID)["code"]
	for i, phone := range phones {
		r := stack.Call(t, http.MethodPost, "/v2/lead/create/", map[string]any{
			"leadType": "straight", "phone": phone, "orderId": orderID, "orderCode": code,
			"name": fmt.Sprintf("Client %d", i+1)})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		leads[int64(r.Data(t)["id"].(float64))] = phone
	}
	return leads
}

func TestSimulateCallsEndToEnd(t *testing.T) {
	body := minimalOrder("Simulated calls")
	body["sipEndpointIds"] = []int{4, 5}
	orderID := createOrder(t, body)
	leads := leadsOfOrder(t, orderID, []string{"+79991110001", "+79991110002", "+447911123456"})
	users := map[float64]bool{}
	for _, id := range userIDs(t) {
		users[float64(id)] = true
	}

	out, err := stack.CCAdmin("simulate-calls", "--order", strconv.FormatInt(orderID, 10), "--count", "7")
	require.NoError(t, err)
	assert.Len(t, strings.Fields(out), 7, "one platform call id per event")

	p := waitForCalls(t, fmt.Sprintf("orderIds[]=%d", orderID), 7)
	called := map[int64]bool{}
	for _, c := range p.List {
		lead := int64(c["leadId"].(float64))
		phone, ok := leads[lead]
		require.True(t, ok, "call of an unknown lead %d", lead)
		called[lead] = true
		assert.Equal(t, strings.TrimPrefix(phone, "+"), c["clientPhone"])
		assert.Equal(t, float64(orderID), c["orderId"])
		assert.True(t, users[c["userId"].(float64)], "handled by a demo user")
		assert.Contains(t, []any{4.0, 5.0}, c["sipEndpointId"], "dialed from the order's numbers")
		assert.Contains(t, []any{"incoming", "outgoing"}, c["direction"])
		status := c["statusId"].(float64)
		assert.True(t, status >= 1 && status <= 9, "a catalog status")
		assert.Equal(t, c["totalDurationSeconds"], c["waitTimeDurationSeconds"].(float64)+c["talkTimeDurationSeconds"].(float64))
	}
	assert.Len(t, called, len(leads), "every lead is called")
}
