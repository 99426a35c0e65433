package agentstate

import (
	"context"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"go.uber.org/zap"
)

// Consumer records the telephony platform's agent events (telephony.agents) on mq.Pipeline.
type Consumer struct {
	store *Store
	pipe  *mq.Pipeline[Event]
	now   func() time.Time
}

// NewConsumer records events in store.
func NewConsumer(store *Store, now func() time.Time, log *zap.Logger) *Consumer {
	c := &Consumer{store: store, now: now}
	c.pipe = &mq.Pipeline[Event]{
		Name:   "agent events",
		Log:    log,
		Decode: c.decode,
		Key:    func(e Event) string { return e.EventID },
		Check:  c.knownUsers,
		Write:  store.Apply,
	}
	return c
}

// Handle is the mq.BatchHandler of telephony.agents: an event that cannot be read or breaks a
// rule, or names no user, is dead-lettered with the reason; the database down is retried; the
// others are recorded in one transaction and acked after its commit.
func (c *Consumer) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	return c.pipe.Handle(ctx, batch)
}

func (c *Consumer) decode(d mq.Delivery) ([]Event, error) {
	if d.Type != telephony.AgentEventType && d.Type != "" {
		return nil, mq.Invalid("unknown message type %q", d.Type)
	}
	ev, err := Decode(d.Body, c.now())
	if err != nil {
		return nil, err
	}
	return []Event{ev}, nil
}

// knownUsers refuses the events of users that do not exist.
func (c *Consumer) knownUsers(ctx context.Context, events []Event) []error {
	ids := make([]int64, len(events))
	for i, e := range events {
		ids[i] = e.UserID
	}
	known, err := c.store.Known(ctx, ids)
	if err != nil {
		return mq.AllFailed(len(events), err)
	}
	errs := make([]error, len(events))
	for i, e := range events {
		if !known[e.UserID] {
			errs[i] = mq.Invalid("invalid agent event: userId: no user has id %d", e.UserID)
		}
	}
	return errs
}
