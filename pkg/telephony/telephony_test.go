package telephony

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWireNames pins the JSON member names of docs/events.md: renaming a field must not change
// the wire.
func TestWireNames(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	by := FinishedByClient
	raw, err := json.Marshal(CallEvent{EventID: "e", PlatformCallID: "p", LeadID: 1, OrderID: 2, UserID: 3,
		SipEndpointID: 4, Direction: DirectionOutgoing, StatusCode: StatusAnswered, FinishInitiator: &by,
		ClientPhone: "+79991234567", StartedAt: at, AnsweredAt: &at, AgentConnectedAt: &at, EndedAt: at, HasRecords: true, IsPredictive: true})
	require.NoError(t, err)
	assert.JSONEq(t, `{"eventId":"e","platformCallId":"p","leadId":1,"orderId":2,"userId":3,"sipEndpointId":4,
		"direction":"outgoing","statusCode":"answered","finishInitiator":"client","clientPhone":"+79991234567",
		"startedAt":"2026-11-21T10:00:00Z","answeredAt":"2026-11-21T10:00:00Z","agentConnectedAt":"2026-11-21T10:00:00Z","endedAt":"2026-11-21T10:00:00Z",
		"hasRecords":true,"isPredictive":true}`, string(raw))

	var back CallEvent
	require.NoError(t, json.Unmarshal([]byte(`{"eventId":"e","startedAt":"2026-11-21T13:00:00+03:00"}`), &back))
	assert.True(t, back.StartedAt.Equal(at))
	assert.Nil(t, back.AnsweredAt, "absent optional members stay nil")
	assert.Nil(t, back.FinishInitiator)
	assert.Nil(t, back.AgentConnectedAt)
}
