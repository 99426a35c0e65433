// Package callresult applies finished calls to their leads: it consumes call.finished (queue
// lead.call-finished on the events exchange) and updates each lead's attempts, status and next
// call time from the order's dialing rules. The rules are plain functions (rules.go); the store
// applies a batch of events in one transaction, once per event (store.go); the consumer fetches
// the orders' rules and settles each message (consumer.go).
package callresult

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"ccplatform/pkg/apitime"
)

// Where call.finished comes from (docs/events.md) and the lead worker's queue for it.
const (
	Exchange    = "events"
	FinishedKey = "call.finished"
	Queue       = "lead.call-finished"
)

// maxEventIDLen bounds the stored key; call-ingest sends UUIDs.
const maxEventIDLen = 128

// Finished is a call.finished event, checked.
type Finished struct {
	EventID string
	CallID  int64
	LeadID  int64
	OrderID int64
	// Outcome is the call's statusCode.
	Outcome string
	EndedAt time.Time
	// UserID is the agent who handled the call (0 when the event does not say).
	UserID int64
	// Outgoing: dialed by the platform (the dialing statistics count only those).
	Outgoing bool
	// Answered: someone picked up (answeredAt set).
	Answered bool
	// TalkSeconds is the call's talk time (data.talkTimeDurationSeconds).
	TalkSeconds int64
	// WaitSeconds is the time from the dial to the answer (data.waitTimeDurationSeconds).
	WaitSeconds int64
}

// message is the wire body (docs/events.md); members the rules do not need are not read.
type message struct {
	EventID    string  `json:"eventId"`
	CallID     int64   `json:"callId"`
	LeadID     int64   `json:"leadId"`
	OrderID    int64   `json:"orderId"`
	StatusCode string  `json:"statusCode"`
	EndedAt    string  `json:"endedAt"`
	UserID     int64   `json:"userId"`
	AnsweredAt *string `json:"answeredAt"`
	Data       struct {
		Direction   string `json:"direction"`
		TalkSeconds int64  `json:"talkTimeDurationSeconds"`
		WaitSeconds int64  `json:"waitTimeDurationSeconds"`
	} `json:"data"`
}

// MaxClockSkew is how far past the worker's clock a call may say it ended; call-ingest refuses such
// calls with the same bound. A call dated further ahead would sort after every real call of its
// lead (Apply keeps the newest), so it is refused here too, and a lead's last call stored that far
// ahead no longer orders the calls that follow (TrustedLastCall).
const MaxClockSkew = 5 * time.Minute

// Decode reads and checks one event, received at now. An error means the message can never be
// applied.
func Decode(body []byte, now time.Time) (Finished, error) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return Finished{}, fmt.Errorf("undecodable event: %w", err)
	}
	var problems []string
	switch {
	case m.EventID == "":
		problems = append(problems, "eventId: is required")
	case len(m.EventID) > maxEventIDLen:
		problems = append(problems, fmt.Sprintf("eventId: must be at most %d characters", maxEventIDLen))
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"callId", m.CallID}, {"leadId", m.LeadID}, {"orderId", m.OrderID}} {
		if f.v <= 0 {
			problems = append(problems, f.name+": must be an integer > 0")
		}
	}
	if m.StatusCode == "" {
		problems = append(problems, "statusCode: is required")
	}
	ended, err := time.Parse(time.RFC3339, m.EndedAt)
	switch {
	case err != nil:
		problems = append(problems, "endedAt: must be an RFC 3339 time")
	case !apitime.InRange(ended):
		problems = append(problems, "endedAt: "+apitime.RangeRule)
	case ended.After(now.Add(MaxClockSkew)):
		problems = append(problems, fmt.Sprintf("endedAt: must be at most %d minutes after the event is received", int(MaxClockSkew/time.Minute)))
	}
	if len(problems) > 0 {
		return Finished{}, errors.New("invalid event: " + strings.Join(problems, "; "))
	}
	return Finished{EventID: m.EventID, CallID: m.CallID, LeadID: m.LeadID, OrderID: m.OrderID,
		Outcome: m.StatusCode, EndedAt: ended.UTC(), UserID: max(m.UserID, 0),
		Outgoing: m.Data.Direction == "outgoing", Answered: m.AnsweredAt != nil || m.StatusCode == OutcomeAbandoned,
		TalkSeconds: max(m.Data.TalkSeconds, 0), WaitSeconds: max(m.Data.WaitSeconds, 0)}, nil
}
