package servicetest

import (
	"fmt"
	"sync/atomic"
	"time"

	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
)

var nextLead atomic.Int64

// LeadID is a lead id no other test of the package uses (each package has a database of its own),
// so a test finds exactly its own calls.
func LeadID() int64 { return 1_000_000 + nextLead.Add(1) }

// Event is a valid answered outgoing call of lead, started at started, with its own ids.
func Event(lead int64, started time.Time) telephony.CallEvent {
	answered := started.Add(12 * time.Second)
	connected := answered.Add(time.Second)
	agent := telephony.FinishedByAgent
	return telephony.CallEvent{
		EventID:          uuid.NewString(),
		PlatformCallID:   "pc-" + uuid.NewString(),
		LeadID:           lead,
		OrderID:          lead%1000 + 1,
		UserID:           5,
		SipEndpointID:    3,
		Direction:        telephony.DirectionOutgoing,
		StatusCode:       telephony.StatusAnswered,
		FinishInitiator:  &agent,
		ClientPhone:      fmt.Sprintf("+7999%07d", lead%10_000_000),
		StartedAt:        started.UTC(),
		AnsweredAt:       &answered,
		AgentConnectedAt: &connected,
		EndedAt:          answered.Add(95 * time.Second),
		HasRecords:       true,
		IsPredictive:     false,
	}
}
