package order

import (
	"context"
	"encoding/json"
	"fmt"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/outbox"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// Events of the order service (docs/architecture.md, "Messaging").
const (
	// EventsExchange is the topic exchange every service publishes its events on.
	EventsExchange = "events"
	// UpdatedKey is the routing key, and the type, of the event announcing a committed update.
	UpdatedKey = "order.updated"
)

// Updated is the body of order.updated. It names the order only: consumers (the lead service's
// order caches) drop what they hold and read the order again when they need it.
type Updated struct {
	EventID    string `json:"eventId"`
	Type       string `json:"type"`
	OccurredAt string `json:"occurredAt"`
	OrderID    int64  `json:"orderId"`
}

// UpdatedOf is the event announcing that o (as stored) changed; each update gets a new event id.
func UpdatedOf(o Order) Updated {
	return Updated{
		EventID:    uuid.NewString(),
		Type:       UpdatedKey,
		OccurredAt: o.UpdatedAt.UTC().Format(TimeLayout),
		OrderID:    o.ID,
	}
}

// announceUpdate records order.updated for o inside tx, the update's own transaction: the event is
// published if and only if the update commits.
func announceUpdate(ctx context.Context, tx *sqlx.Tx, o Order) error {
	ev := UpdatedOf(o)
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode %s: %w", UpdatedKey, err)
	}
	return outbox.Add(ctx, tx, EventsExchange, UpdatedKey, mq.Message{ID: ev.EventID, Type: ev.Type, Body: body})
}
