package main

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestADialedCallIsOutgoingAndEndsNow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for range 500 {
		ev := dialedCall(r, now, simLead{ID: 4, Phone: "+79991234567", OrderID: 2}, 7, 3)
		assert.Equal(t, telephony.DirectionOutgoing, ev.Direction)
		assert.Equal(t, now, ev.EndedAt)
		assert.True(t, ev.StartedAt.Before(now) || ev.StartedAt.Equal(now))
		if ev.AnsweredAt != nil {
			assert.False(t, ev.AnsweredAt.Before(ev.StartedAt))
			assert.False(t, ev.AnsweredAt.After(now))
		}
	}
}

func TestExplanationListsTheReasonsThatHold(t *testing.T) {
	var why ccapi.DialerExplainResult
	require.NoError(t, json.Unmarshal([]byte(`{"orderId":3,"at":"2026-11-23T20:00:00+00:00","due":0,"notDue":3,"reasons":[
		{"reason":"autoDialOff","count":0},{"reason":"outsideWindow","count":2,"nextWindowAt":"2026-11-24T06:00:00+00:00"},
		{"reason":"plannedLater","count":1,"earliestPlannedAt":"2026-11-24T07:30:00+00:00"},{"reason":"noAgent","count":0}]}`), &why.Data))
	assert.Equal(t, "leads not due: 3, due: 0\n"+
		"  outsideWindow  2 (next window opens 2026-11-24T06:00:00Z)\n"+
		"  plannedLater   1 (earliest planned 2026-11-24T07:30:00Z)\n", explanation(why))
}
