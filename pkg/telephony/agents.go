package telephony

import "time"

// AgentsQueue is the work queue the platform publishes agent state events to.
const AgentsQueue = "telephony.agents"

// AgentEventType is the AMQP type of an agent state event.
const AgentEventType = "telephony.agent.state"

// Agent states: what an agent is doing.
const (
	AgentOffline   = "offline"
	AgentAvailable = "available"
	AgentRinging   = "ringing"
	AgentOnCall    = "on-call"
	AgentWrapUp    = "wrap-up"
	AgentPaused    = "paused"
)

// AgentStates lists every agent state.
func AgentStates() []string {
	return []string{AgentOffline, AgentAvailable, AgentRinging, AgentOnCall, AgentWrapUp, AgentPaused}
}

// AgentEvent is one change of an agent's state as the platform reports it. Events may arrive late,
// out of order and twice: the newest At decides the agent's state.
type AgentEvent struct {
	// EventID identifies this message (it is also the AMQP message_id): the same id twice is one
	// event.
	EventID string    `json:"eventId"`
	UserID  int64     `json:"userId"`
	At      time.Time `json:"at"`
	State   string    `json:"state"`
	// PauseReason says why a paused agent paused (paused only).
	PauseReason *string `json:"pauseReason"`
	// OrderID is the order the state concerns, where it concerns one (a call of that order).
	OrderID *int64 `json:"orderId"`
}
