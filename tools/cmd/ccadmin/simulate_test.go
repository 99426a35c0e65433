package main

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/cli"
	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestSimulateCallsChecksItsFlags covers the refusals made before any service is asked; the run
// itself, against the real lead service, broker and call service, is gateway/e2e/call_test.go
// (TestSimulateCallsEndToEnd).
func TestSimulateCallsChecksItsFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"no order":        {"--count", "5"},
		"order zero":      {"--order", "0"},
		"count zero":      {"--order", "5", "--count", "0"},
		"count too large": {"--order", "5", "--count", "1001"},
		"stray argument":  {"--order", "5", "extra"},
	} {
		t.Run(name, func(t *testing.T) {
			out, _, err := ccadmin(t, append([]string{"simulate-calls"}, args...)...)
			var ue cli.UsageError
			assert.ErrorAs(t, err, &ue)
			assert.Empty(t, out)
		})
	}
}
