// Package agentstate is what each agent is doing: the states the telephony platform reports on the
// telephony.agents queue and those agents set through the API, kept as a history (every event once,
// by its id) and a current state per agent (the event with the newest time: events arrive late, out
// of order and twice). The dialer's pacer reads the eligible agents of an order from here.
package agentstate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/telephony"
	"ccplatform/pkg/web"
)

// Sources of an event.
const (
	SourceTelephony = "telephony"
	SourceAPI       = "api"
)

// Bounds of an event's members.
const (
	maxEventID     = 100
	maxPauseReason = 200
	// maxAhead is how far in the future an event may be dated: a clock a little ahead is tolerated,
	// an event from the future would freeze its agent's state until then.
	maxAhead = 5 * time.Minute
)

// Event is an accepted agent state event.
type Event struct {
	telephony.AgentEvent
	Source string
}

// Decode reads a telephony.agents message and checks it (Check).
func Decode(body []byte, now time.Time) (Event, error) {
	var ev telephony.AgentEvent
	if err := web.Unmarshal(body, &ev); err != nil {
		return Event{}, fmt.Errorf("undecodable agent event: %w", err)
	}
	if err := Check(ev, now); err != nil {
		return Event{}, fmt.Errorf("invalid agent event: %w", err)
	}
	return Event{AgentEvent: ev, Source: SourceTelephony}, nil
}

// Check refuses an event that breaks a rule, naming every member at fault.
func Check(ev telephony.AgentEvent, now time.Time) error {
	fe := apperr.FieldErrors{}
	switch {
	case strings.TrimSpace(ev.EventID) == "":
		fe.Add("eventId", "is required")
	case len(ev.EventID) > maxEventID || !web.CleanText(ev.EventID):
		fe.Addf("eventId", "must be at most %d characters of text", maxEventID)
	}
	if ev.UserID <= 0 {
		fe.Add("userId", "must be an integer > 0")
	}
	switch {
	case ev.At.IsZero():
		fe.Add("at", "is required")
	case !apitime.InRange(ev.At):
		fe.Add("at", apitime.RangeRule)
	case ev.At.After(now.Add(maxAhead)):
		fe.Add("at", "must be at most 5 minutes after the event is received")
	}
	if !slices.Contains(telephony.AgentStates(), ev.State) {
		fe.Add("state", "must be one of "+strings.Join(telephony.AgentStates(), ", "))
	}
	checkPauseReason(fe, ev.State, ev.PauseReason)
	if ev.OrderID != nil && *ev.OrderID <= 0 {
		fe.Add("orderId", "must be an integer > 0")
	}
	return fe.Err()
}

// Input is the body of POST /v2/agent/state/: the state an agent sets (its own, or, for staff,
// another agent's).
type Input struct {
	State       string  `json:"state"`
	PauseReason *string `json:"pauseReason"`
	UserID      *int64  `json:"userId"`
}

// settable are the states an agent sets itself; the others come from the telephony platform.
var settable = []string{telephony.AgentAvailable, telephony.AgentPaused, telephony.AgentOffline}

// CheckInput refuses a body that breaks a rule.
func CheckInput(in Input) error {
	fe := apperr.FieldErrors{}
	if !slices.Contains(settable, in.State) {
		fe.Add("state", "must be one of "+strings.Join(settable, ", "))
	}
	checkPauseReason(fe, in.State, in.PauseReason)
	if in.UserID != nil && *in.UserID <= 0 {
		fe.Add("userId", "must be an integer > 0")
	}
	return fe.Err()
}

// checkPauseReason refuses a pause reason given with another state than paused, or too long.
func checkPauseReason(fe apperr.FieldErrors, state string, reason *string) {
	switch {
	case reason == nil:
	case state != telephony.AgentPaused:
		fe.Add("pauseReason", "is allowed only with the state paused")
	case len(*reason) > maxPauseReason || !web.CleanText(*reason):
		fe.Addf("pauseReason", "must be at most %d characters of text", maxPauseReason)
	}
}
