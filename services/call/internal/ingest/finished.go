package ingest

import (
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/services/call/internal/call"

	"github.com/google/uuid"
)

// Where call.finished goes: the topic exchange of platform events, under its own routing key.
const (
	Exchange     = "events"
	FinishedKey  = "call.finished"
	FinishedType = "call.finished"
)

// Pending is a stored call whose call.finished the broker has not confirmed yet.
type Pending struct {
	call.Record
	PlatformCallID   string     `db:"platform_call_id"`
	StatusCode       string     `db:"status_code"`
	EndedAt          time.Time  `db:"ended_at"`
	FinishedEventID  uuid.UUID  `db:"finished_event_id"`
	AnsweredAt       *time.Time `db:"answered_at"`
	AgentConnectedAt *time.Time `db:"agent_connected_at"`
}

// Finished is the body of call.finished (docs/events.md).
type Finished struct {
	EventID    string `json:"eventId"`
	Type       string `json:"type"`
	OccurredAt string `json:"occurredAt"`
	CallID     int64  `json:"callId"`
	LeadID     int64  `json:"leadId"`
	OrderID    int64  `json:"orderId"`
	UserID     int64  `json:"userId"`
	StatusID   int64  `json:"statusId"`
	StatusCode string `json:"statusCode"`
	EndedAt    string `json:"endedAt"`
	// AnsweredAt is when someone picked up, AgentConnectedAt when an agent was put through (null:
	// nobody, no agent): the lead service counts answered and abandoned calls from them.
	AnsweredAt       *string `json:"answeredAt"`
	AgentConnectedAt *string `json:"agentConnectedAt"`
	// Data is the call as the API returns it (GET /v2/call/detail/{id}), for consumers that
	// forward the event outside (webhooks).
	Data call.Call `json:"data"`
}

// FinishedOf is the event announcing p. Its id was fixed when the call was stored, so a copy sent
// again after a lost confirm carries the same id.
func FinishedOf(p Pending) Finished {
	ended := apitime.String(p.EndedAt)
	return Finished{
		EventID:          p.FinishedEventID.String(),
		Type:             FinishedType,
		OccurredAt:       ended,
		CallID:           p.ID,
		LeadID:           p.LeadID,
		OrderID:          p.OrderID,
		UserID:           p.UserID,
		StatusID:         p.StatusID,
		StatusCode:       p.StatusCode,
		EndedAt:          ended,
		AnsweredAt:       apitime.StringOrNull(p.AnsweredAt),
		AgentConnectedAt: apitime.StringOrNull(p.AgentConnectedAt),
		Data:             call.ViewOf(p.Record),
	}
}
