package order

import (
	"context"
	"fmt"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/event"

	"github.com/jmoiron/sqlx"
)

// Events of the order service (docs/events.md).
const (
	// EventsExchange is the topic exchange every service publishes its events on.
	EventsExchange = event.Exchange
	// UpdatedKey is the routing key, and the type, of the event announcing a committed update.
	UpdatedKey = "order.updated"
)

// UpdatedOf is the event announcing that o (as stored) changed: the order as the API returns it
// (without its custom values, which live beside it), when and by whom. Each update gets a new
// event id. The lead service's order caches read orderId only: they drop what they hold.
func UpdatedOf(o Order) (event.Event, error) {
	ev, err := event.New(UpdatedKey, o.ID, ViewOf(o))
	if err != nil {
		return event.Event{}, fmt.Errorf("order %d: %w", o.ID, err)
	}
	ev.OccurredAt = apitime.String(o.UpdatedAt)
	if o.UpdatedBy != nil {
		ev.ActorUserID = *o.UpdatedBy
	}
	return ev, nil
}

// announceUpdate records order.updated for o inside tx, the update's own transaction: the event is
// published if and only if the update commits.
func announceUpdate(ctx context.Context, tx *sqlx.Tx, o Order) error {
	ev, err := UpdatedOf(o)
	if err != nil {
		return err
	}
	return event.Record(ctx, tx, ev)
}
