package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestSimulatedCallsAreRealistic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)
	lead := simLead{ID: 4, Phone: "+79991234567", OrderID: 2}
	codes := map[string]int{}
	incoming := 0
	for range 2000 {
		ev := simulatedCall(r, now, lead, 7, 3)
		codes[ev.StatusCode]++
		assert.NotEmpty(t, ev.EventID)
		assert.True(t, strings.HasPrefix(ev.PlatformCallID, "sim-"))
		assert.Equal(t, []int64{4, 2, 7, 3}, []int64{ev.LeadID, ev.OrderID, ev.UserID, ev.SipEndpointID})
		assert.Equal(t, lead.Phone, ev.ClientPhone)
		assert.False(t, ev.EndedAt.After(now), "calls have ended")
		assert.False(t, ev.EndedAt.Before(ev.StartedAt))
		if ev.AnsweredAt != nil {
			assert.False(t, ev.AnsweredAt.Before(ev.StartedAt))
			assert.False(t, ev.AnsweredAt.After(ev.EndedAt))
		}
		assert.Equal(t, ev.StatusCode == telephony.StatusAnswered, ev.HasRecords, "answered calls are recorded")
		if ev.StatusCode == telephony.StatusAnswered {
			require.NotNil(t, ev.AnsweredAt)
			assert.GreaterOrEqual(t, ev.EndedAt.Sub(*ev.AnsweredAt), 20*time.Second)
		}
		if ev.Direction == telephony.DirectionIncoming {
			incoming++
			assert.False(t, ev.IsPredictive, "only outgoing calls are predictive")
		}
		if ev.FinishInitiator != nil {
			assert.Contains(t, []string{"agent", "client", "system"}, *ev.FinishInitiator)
		}
	}
	for _, o := range outcomes {
		assert.Positive(t, codes[o.code], "status %s occurs", o.code)
	}
	assert.Greater(t, codes[telephony.StatusAnswered], codes[telephony.StatusNoAnswer], "most calls are answered")
	assert.InDelta(t, 200, incoming, 80)
}

func TestSimulateCallsPublishesEventsForTheLeads(t *testing.T) {
	_, _, err := ccadmin(t, "seed", "--demo")
	require.NoError(t, err)
	amqpURL, drop, err := mqtest.CreateVhost("ccadmin_simulate")
	require.NoError(t, err)
	t.Cleanup(func() { _ = drop() })
	var asked string
	leadService := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/internal/leads" {
			http.NotFound(w, r)
			return
		}
		asked = r.URL.String()
		assert.Equal(t, "t", r.Header.Get("X-Internal-Token"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"success":true,"message":"","data":{"list":[
			{"id":11,"phone":"+79991234567","orderId":5},{"id":12,"phone":"+447911123456","orderId":5}]}}`))
	}))
	t.Cleanup(leadService.Close)
	t.Setenv("LEAD_URL", leadService.URL)
	t.Setenv("AMQP_URL", amqpURL)

	stdout, stderr, err := ccadmin(t, "simulate-calls", "--order", "5", "--count", "5")
	require.NoError(t, err, stderr)
	assert.Equal(t, "/internal/leads?orderId=5&limit=5", asked)
	ids := strings.Fields(stdout)
	require.Len(t, ids, 5, "one platform call id per event")
	assert.Contains(t, stderr, "5 call events for order 5")

	conn := mq.Dial(amqpURL, "ccadmin-test", zap.NewNop())
	defer conn.Close()
	ch, err := conn.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	leads := map[int64]bool{}
	for i := range 5 {
		d, ok, err := ch.Get(telephony.Queue, true)
		require.NoError(t, err)
		require.True(t, ok, "event %d is on the queue", i)
		var ev telephony.CallEvent
		require.NoError(t, json.Unmarshal(d.Body, &ev))
		assert.Equal(t, ev.EventID, d.MessageId)
		assert.Equal(t, telephony.EventType, d.Type)
		assert.Equal(t, ids[i], ev.PlatformCallID)
		assert.Equal(t, int64(5), ev.OrderID)
		assert.Equal(t, int64(1), ev.SipEndpointID, "no order service: number 1")
		assert.Positive(t, ev.UserID)
		leads[ev.LeadID] = true
	}
	assert.Equal(t, map[int64]bool{11: true, 12: true}, leads, "every lead is called")

	_, _, err = ccadmin(t, "simulate-calls", "--count", "5")
	var ue usageError
	assert.ErrorAs(t, err, &ue, "--order is required")
	_, _, err = ccadmin(t, "simulate-calls", "--order", "5", "--count", "0")
	assert.ErrorAs(t, err, &ue)
}
