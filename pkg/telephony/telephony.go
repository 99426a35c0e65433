// Package telephony is the wire schema of the call events the telephony platform publishes to the
// telephony.calls queue (docs/events.md). It holds only the shape and the vocabulary of that
// third-party message, so that the call service that consumes it and the tools that play the
// platform's part in demos and tests read and write the very same JSON; the rules that decide
// whether an event is acceptable belong to the call service.
package telephony

import "time"

// Queue is the work queue the platform publishes call events to.
const Queue = "telephony.calls"

// EventType is the AMQP type of a call event.
const EventType = "telephony.call.ended"

// Directions of a call.
const (
	DirectionIncoming = "incoming"
	DirectionOutgoing = "outgoing"
)

// Who ended a call.
const (
	FinishedByAgent  = "agent"
	FinishedByClient = "client"
	FinishedBySystem = "system"
)

// Status codes the platform reports for a call's outcome; the call service maps each to its
// call-status catalog.
const (
	StatusAnswered      = "answered"
	StatusNoAnswer      = "no_answer"
	StatusBusy          = "busy"
	StatusFailed        = "failed"
	StatusVoicemail     = "voicemail"
	StatusRejected      = "rejected"
	StatusCancelled     = "cancelled"
	StatusInvalidNumber = "invalid_number"
	StatusAbandoned     = "abandoned"
)

// CallEvent is one finished call as the platform reports it, sent once the call has ended.
// Absent optional members decode to their zero value (nil, false).
type CallEvent struct {
	// EventID identifies this message (it is also the AMQP message_id).
	EventID string `json:"eventId"`
	// PlatformCallID is the platform's own id of the call: the same call reported twice is one call.
	PlatformCallID  string     `json:"platformCallId"`
	LeadID          int64      `json:"leadId"`
	OrderID         int64      `json:"orderId"`
	UserID          int64      `json:"userId"`
	SipEndpointID   int64      `json:"sipEndpointId"`
	Direction       string     `json:"direction"`
	StatusCode      string     `json:"statusCode"`
	FinishInitiator *string    `json:"finishInitiator"`
	ClientPhone     string     `json:"clientPhone"`
	StartedAt       time.Time  `json:"startedAt"`
	AnsweredAt      *time.Time `json:"answeredAt"`
	// AgentConnectedAt is when an agent was put through to the answered call; nil when no agent
	// took it (an answered call without one within 2 s is abandoned: the call service decides).
	AgentConnectedAt *time.Time `json:"agentConnectedAt"`
	EndedAt          time.Time  `json:"endedAt"`
	HasRecords       bool       `json:"hasRecords"`
	IsPredictive     bool       `json:"isPredictive"`
}
