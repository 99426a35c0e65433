// Package ingest turns the telephony platform's call events (queue telephony.calls) into stored
// calls, each stored once by the platform's call id, and announces every new call with a
// call.finished event on the events exchange (docs/events.md).
package ingest

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/telephony"
	"ccplatform/pkg/web"
)

// NewCall is a call ready to be stored, made from a valid platform event.
type NewCall struct {
	EventID         string
	PlatformCallID  string
	LeadID          int64
	OrderID         int64
	UserID          int64
	SipEndpointID   int64
	Direction       string
	StatusCode      string
	FinishInitiator *string
	// ClientPhone is E.164 digits without "+".
	ClientPhone  string
	IsPredictive bool
	HasRecords   bool
	StartedAt    time.Time
	AnsweredAt   *time.Time
	// AgentConnectedAt is when an agent took the answered call (nil: none did).
	AgentConnectedAt *time.Time
	EndedAt          time.Time
	// Durations in whole seconds, derived from the three instants (docs/events.md).
	TotalSeconds int
	WaitSeconds  int
	TalkSeconds  int
}

// maxCallLength bounds a call's length: anything longer is a clock error on the platform's side,
// not a call.
const maxCallLength = 24 * time.Hour

const maxIDLength = 128

// MaxClockSkew is how far past the ingest's clock a call may say it ended. The platform reports a
// call once it has ended, so a later end is its clock's error, and a call dated in the future would
// sort after every real call of its lead (the lead service applies the newest call): refused as
// invalid rather than stored (docs/events.md).
const MaxClockSkew = 5 * time.Minute

var (
	e164       = regexp.MustCompile(`^\+?([1-9][0-9]{6,14})$`)
	statusCode = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// Decode reads a message body as a call event. A body that is not a JSON object of the event's
// shape can never succeed, so the error says why for the dead-letter queue.
func Decode(body []byte) (telephony.CallEvent, error) {
	var e telephony.CallEvent
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return e, fmt.Errorf("undecodable event: not a JSON object")
	}
	// The bodies' decoder (pkg/web): exact member names, valid UTF-8, no U+0000, numbers that fit.
	if err := web.Unmarshal(trimmed, &e); err != nil {
		return e, fmt.Errorf("undecodable event: %w", err)
	}
	return e, nil
}

// FromEvent checks every rule of a call event, received at now, and returns the call to store; the
// error names every broken member.
func FromEvent(e telephony.CallEvent, now time.Time) (NewCall, error) {
	fe := apperr.FieldErrors{}
	c := NewCall{
		EventID:         strings.TrimSpace(e.EventID),
		PlatformCallID:  strings.TrimSpace(e.PlatformCallID),
		LeadID:          e.LeadID,
		OrderID:         e.OrderID,
		UserID:          e.UserID,
		SipEndpointID:   e.SipEndpointID,
		Direction:       e.Direction,
		StatusCode:      e.StatusCode,
		FinishInitiator: e.FinishInitiator,
		IsPredictive:    e.IsPredictive,
		HasRecords:      e.HasRecords,
		StartedAt:       e.StartedAt.UTC(),
		EndedAt:         e.EndedAt.UTC(),
	}
	requireText(fe, "eventId", c.EventID)
	requireText(fe, "platformCallId", c.PlatformCallID)
	for _, id := range []struct {
		name  string
		value int64
	}{{"leadId", e.LeadID}, {"orderId", e.OrderID}, {"userId", e.UserID}, {"sipEndpointId", e.SipEndpointID}} {
		if id.value <= 0 {
			fe.Add(id.name, "must be an integer > 0")
		}
	}
	switch e.Direction {
	case telephony.DirectionIncoming, telephony.DirectionOutgoing:
	default:
		fe.Add("direction", "must be incoming or outgoing")
	}
	if !statusCode.MatchString(e.StatusCode) {
		fe.Add("statusCode", "must be a call status code")
	}
	if e.FinishInitiator != nil {
		switch *e.FinishInitiator {
		case telephony.FinishedByAgent, telephony.FinishedByClient, telephony.FinishedBySystem:
		default:
			fe.Add("finishInitiator", "must be agent, client, system or null")
		}
	}
	if m := e164.FindStringSubmatch(strings.TrimSpace(e.ClientPhone)); m != nil {
		c.ClientPhone = m[1]
	} else {
		fe.Add("clientPhone", "must be a phone number in E.164 format")
	}
	if e.IsPredictive && e.Direction == telephony.DirectionIncoming {
		fe.Add("isPredictive", "an incoming call cannot be predictive")
	}
	checkTimes(fe, e, now, &c)
	if err := fe.Err(); err != nil {
		return NewCall{}, err
	}
	c.TotalSeconds, c.WaitSeconds, c.TalkSeconds = Durations(c.StartedAt, c.AnsweredAt, c.EndedAt)
	if Abandoned(c) {
		c.StatusCode = telephony.StatusAbandoned
	}
	return c, nil
}

func requireText(fe apperr.FieldErrors, name, v string) {
	switch {
	case v == "":
		fe.Add(name, "is required")
	case len(v) > maxIDLength:
		fe.Addf(name, "must be at most %d characters", maxIDLength)
	}
}

// checkTimes requires startedAt <= answeredAt <= endedAt <= now + MaxClockSkew, answeredAt being
// optional, each within the years the database stores (apitime.InRange).
func checkTimes(fe apperr.FieldErrors, e telephony.CallEvent, now time.Time, c *NewCall) {
	for _, t := range []struct {
		name string
		at   *time.Time
	}{{"startedAt", &e.StartedAt}, {"answeredAt", e.AnsweredAt}, {"endedAt", &e.EndedAt}} {
		switch {
		case t.at == nil:
		case t.at.IsZero() && t.name != "answeredAt":
			fe.Add(t.name, "is required")
		case !apitime.InRange(*t.at):
			fe.Add(t.name, apitime.RangeRule)
		}
	}
	if fe.Has("startedAt") || fe.Has("endedAt") || fe.Has("answeredAt") {
		return
	}
	if e.EndedAt.Before(e.StartedAt) {
		fe.Add("endedAt", "must not be before startedAt")
		return
	}
	if e.EndedAt.Sub(e.StartedAt) > maxCallLength {
		fe.Add("endedAt", "must be at most 24 hours after startedAt")
		return
	}
	if e.EndedAt.After(now.Add(MaxClockSkew)) {
		fe.Addf("endedAt", "must be at most %d minutes after the event is received: the call has ended", int(MaxClockSkew/time.Minute))
		return
	}
	if e.AnsweredAt != nil {
		if e.AnsweredAt.Before(e.StartedAt) || e.AnsweredAt.After(e.EndedAt) {
			fe.Add("answeredAt", "must be between startedAt and endedAt")
			return
		}
		a := e.AnsweredAt.UTC()
		c.AnsweredAt = &a
	}
	if e.AgentConnectedAt != nil {
		switch at := e.AgentConnectedAt.UTC(); {
		case !apitime.InRange(at):
			fe.Add("agentConnectedAt", apitime.RangeRule)
		case c.AnsweredAt == nil:
			fe.Add("agentConnectedAt", "must be null when answeredAt is null: nobody answered")
		case at.Before(*c.AnsweredAt) || at.After(c.EndedAt):
			fe.Add("agentConnectedAt", "must be between answeredAt and endedAt")
		default:
			c.AgentConnectedAt = &at
		}
	}
}

// AbandonGrace is how long after a person answers an agent may be put through before the call
// counts as abandoned (the caller heard silence or a hold message instead of an agent).
const AbandonGrace = 2 * time.Second

// Abandoned reports whether a call the platform reports as answered by a person (status answered;
// a voicemail is a machine) was dropped for want of an agent: no agent was connected, or one was
// only more than AbandonGrace after the answer. Such a call is stored with the status abandoned.
// Only outgoing calls are dialed by the platform's dialers; an incoming call waits in a queue.
func Abandoned(c NewCall) bool {
	if c.Direction != telephony.DirectionOutgoing || c.StatusCode != telephony.StatusAnswered || c.AnsweredAt == nil {
		return false
	}
	return c.AgentConnectedAt == nil || c.AgentConnectedAt.Sub(*c.AnsweredAt) > AbandonGrace
}

// Durations are the call's total, waiting and talk time in whole seconds. The instants are cut to
// the second first, so total is always wait + talk. A call nobody answered was waiting all along.
func Durations(started time.Time, answered *time.Time, ended time.Time) (total, wait, talk int) {
	s, e := started.Truncate(time.Second), ended.Truncate(time.Second)
	total = int(e.Sub(s) / time.Second)
	if answered == nil {
		return total, total, 0
	}
	a := answered.Truncate(time.Second)
	wait = int(a.Sub(s) / time.Second)
	return total, wait, total - wait
}
