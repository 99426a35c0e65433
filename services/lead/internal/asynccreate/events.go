package asynccreate

import "ccplatform/pkg/event"

// EventFailed is the type, and routing key, of the event announcing a job the worker refused
// (docs/events.md).
const EventFailed = "lead.job.failed"

// FailedEvent is lead.job.failed of the failed outcome o: its data the job as the status route
// answers it. orderID is the order the job named when that order exists (0 otherwise) and actor
// the user who submitted the job (nil: unknown).
func FailedEvent(o Outcome, orderID int64, actor *int64) (event.Event, error) {
	ev, err := event.New(EventFailed, orderID, StatusOf(o))
	if err != nil {
		return event.Event{}, err
	}
	if actor != nil {
		ev.ActorUserID = *actor
	}
	return ev, nil
}
