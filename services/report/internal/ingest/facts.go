// Package ingest keeps the report aggregates current: it consumes the events of the events
// exchange (queue report.events) and adds each one to its buckets, once. Its logic is three plain
// functions shaped like a consumer pipeline's steps: Decode (a delivery into facts), and Write
// (the facts not counted yet, added in one transaction, deduplicated by event id there); Handle
// runs them for today's mq.Consumer.
package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/services/report/internal/bucket"
)

// Queue is the report service's queue on the events exchange.
const Queue = "report.events"

// The event types the reports count.
const (
	CallFinished      = "call.finished"
	LeadCreated       = "lead.created"
	LeadStatusChanged = "lead.status_changed"
)

// Topology declares Queue bound to the events exchange for the types the reports count.
func Topology() mq.Topology {
	return mq.Subscription(event.Exchange, Queue, CallFinished, LeadCreated, LeadStatusChanged, AgentStateChanged)
}

// The call statuses the reports tell apart (the call-status catalog, docs/events.md): answered and
// abandoned are the calls a person picked up; abandoned ones found no free agent.
const (
	statusAnswered  = "answered"
	statusAbandoned = "abandoned"
)

// Call is what a report counts of one call.finished: its order, lead and agent, when it started
// (its bucket), its status and its talk time.
type Call struct {
	OrderID     int64
	LeadID      int64
	UserID      int64
	StartedAt   time.Time
	StatusCode  string
	TalkSeconds int64
}

// Answered reports a call a person picked up (answered or abandoned).
func (c Call) Answered() bool {
	return c.StatusCode == statusAnswered || c.StatusCode == statusAbandoned
}

// Handled reports a call an agent talked on.
func (c Call) Handled() bool { return c.StatusCode == statusAnswered }

// Abandoned reports a call the client answered with no agent free.
func (c Call) Abandoned() bool { return c.StatusCode == statusAbandoned }

// StatusEntry is a lead entering a status: created in it or changed to it.
type StatusEntry struct {
	OrderID  int64
	StatusID int64
	At       time.Time
}

// Fact is one event as the reports count it: exactly one of its members is set.
type Fact struct {
	EventID string
	Call    *Call
	Status  *StatusEntry
	Agent   *AgentState
}

// callData is the part of call.finished's data (the call as the API returns it) a report reads.
type callData struct {
	CreatedAt   string `json:"createdAt"`
	TalkSeconds int64  `json:"talkTimeDurationSeconds"`
}

// finished is call.finished's own members beside the pkg/event shape.
type finished struct {
	LeadID     int64  `json:"leadId"`
	UserID     int64  `json:"userId"`
	StatusCode string `json:"statusCode"`
}

// leadData is the part of a lead event's data (the lead) a report reads.
type leadData struct {
	StatusID int64 `json:"statusId"`
}

// FactOf reads ev (the item of a delivery, body its JSON) as a fact, or says which member breaks
// which rule (the item is then dead-lettered).
func FactOf(ev event.Event, body []byte) (Fact, error) {
	fe := apperr.FieldErrors{}
	f := Fact{EventID: ev.ID}
	if ev.OrderID <= 0 && ev.Type != AgentStateChanged {
		fe.Add("orderId", "must be an integer > 0")
	}
	switch ev.Type {
	case AgentStateChanged:
		s, err := agentStateOf(ev.Data, fe)
		if err != nil {
			return Fact{}, err
		}
		f.Agent = s
	case CallFinished:
		var top finished
		var data callData
		if err := json.Unmarshal(body, &top); err != nil {
			return Fact{}, fmt.Errorf("invalid event: %w", err)
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			return Fact{}, fmt.Errorf("invalid event: data: %w", err)
		}
		started := eventTime(data.CreatedAt, "data.createdAt", fe)
		if top.LeadID <= 0 {
			fe.Add("leadId", "must be an integer > 0")
		}
		if top.UserID <= 0 {
			fe.Add("userId", "must be an integer > 0")
		}
		if top.StatusCode == "" {
			fe.Add("statusCode", "is required")
		}
		if data.TalkSeconds < 0 {
			fe.Add("data.talkTimeDurationSeconds", "must be >= 0")
		}
		f.Call = &Call{OrderID: ev.OrderID, LeadID: top.LeadID, UserID: top.UserID, StartedAt: started,
			StatusCode: top.StatusCode, TalkSeconds: data.TalkSeconds}
	case LeadCreated, LeadStatusChanged:
		var data leadData
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			return Fact{}, fmt.Errorf("invalid event: data: %w", err)
		}
		at := eventTime(ev.OccurredAt, "occurredAt", fe)
		if data.StatusID <= 0 {
			fe.Add("data.statusId", "must be an integer > 0")
		}
		f.Status = &StatusEntry{OrderID: ev.OrderID, StatusID: data.StatusID, At: at}
	default:
		return Fact{}, fmt.Errorf("invalid event: type: %q is not counted by the reports", ev.Type)
	}
	if err := fe.Err(); err != nil {
		return Fact{}, fmt.Errorf("invalid event: %s", fe.Message())
	}
	return f, nil
}

// eventTime reads an RFC 3339 time of an event, within the years the API writes.
func eventTime(raw, field string, fe apperr.FieldErrors) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(raw))
	switch {
	case err != nil:
		fe.Add(field, "must be an RFC 3339 date-time")
	case !apitime.InRange(t):
		fe.Add(field, apitime.RangeRule)
	}
	return t
}

// Bucket is the bucket a fact is counted in.
func (f Fact) Bucket() time.Time {
	if f.Call != nil {
		return bucket.Of(f.Call.StartedAt)
	}
	if f.Agent != nil {
		return bucket.Of(f.Agent.At)
	}
	return bucket.Of(f.Status.At)
}
