// Package event is the one shape of the platform's domain events on the `events` topic exchange
// (docs/events.md): each announces a committed change and carries the resource as the public API
// returns it, so a consumer that forwards events to outside systems (the webhook dispatcher) needs
// no second read. Services record them with Record, inside the transaction of the change, through
// the transactional outbox.
package event

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/outbox"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// Exchange is the topic exchange every service publishes its events on; an event's routing key is
// its type.
const Exchange = "events"

// GroupType is the AMQP type of a message carrying many events of one routing key (a relay's
// batch, mq.JoinGroup): services that announce every lead publish them so; consumers read both
// forms with Expand.
const GroupType = "events.group"

// Event is a domain event. OrderID and ActorUserID say whose it is, so a consumer can apply the
// platform's access rules (a client sees the events of its own orders); Data is the resource.
type Event struct {
	ID         string `json:"eventId"`
	Type       string `json:"type"`
	OccurredAt string `json:"occurredAt"`
	// OrderID is the order the resource belongs to; 0 when there is none (a refused job that named
	// no known order).
	OrderID int64 `json:"orderId,omitempty"`
	// ActorUserID is the user whose request made the change; 0 for the platform itself (a call
	// result, a worker).
	ActorUserID int64 `json:"actorUserId,omitempty"`
	// Data is the resource as the public API returns it.
	Data json.RawMessage `json:"data,omitempty"`
	// ChangedFields names the fields an update changed (lead.updated), as the API names them.
	ChangedFields []string `json:"changedFields,omitempty"`
	// PreviousStatusID is the status before a status change (lead.status_changed); the new one is
	// in Data.
	PreviousStatusID *int64 `json:"previousStatusId,omitempty"`
}

// New is an event of type typ about data, now, with a fresh id.
func New(typ string, orderID int64, data any) (Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("event %s: encode data: %w", typ, err)
	}
	return Event{ID: uuid.NewString(), Type: typ, OccurredAt: apitime.String(time.Now()),
		OrderID: orderID, Data: raw}, nil
}

// Message is ev as a broker message: persistent, id = event id, type = event type.
func (ev Event) Message() (mq.Message, error) {
	if ev.ID == "" || ev.Type == "" {
		return mq.Message{}, errors.New("event: id and type are required")
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return mq.Message{}, fmt.Errorf("event %s: encode: %w", ev.Type, err)
	}
	return mq.Message{ID: ev.ID, Type: ev.Type, Body: body}, nil
}

// Record adds ev to the outbox inside tx: it is published on Exchange, with its type as routing
// key, if and only if tx commits.
func Record(ctx context.Context, tx *sqlx.Tx, ev Event) error {
	msg, err := ev.Message()
	if err != nil {
		return err
	}
	return outbox.Add(ctx, tx, Exchange, ev.Type, msg)
}

// Decode reads an event from a message body, refusing one without id or type.
func Decode(body []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return Event{}, fmt.Errorf("event: %w", err)
	}
	if ev.ID == "" || ev.Type == "" {
		return Event{}, errors.New("event: eventId and type are required")
	}
	return ev, nil
}

// RecordAll adds evs to the outbox inside tx with one statement, as Record does each.
func RecordAll(ctx context.Context, tx *sqlx.Tx, evs []Event) error {
	msgs := make([]outbox.Keyed, len(evs))
	for i, ev := range evs {
		msg, err := ev.Message()
		if err != nil {
			return err
		}
		msgs[i] = outbox.Keyed{Key: ev.Type, Msg: msg}
	}
	return outbox.AddAll(ctx, tx, Exchange, msgs)
}

// Expand reads the events of a message of AMQP type typ: one, or every item of a group. The items
// of a group that are not events are returned apart (bad), for the consumer to dead-letter alone;
// err is a body that is neither.
func Expand(typ string, body []byte) (evs []Event, bad [][]byte, err error) {
	if typ != GroupType {
		ev, err := Decode(body)
		if err != nil {
			return nil, nil, err
		}
		return []Event{ev}, nil, nil
	}
	items, err := mq.SplitGroup(body)
	if err != nil {
		return nil, nil, fmt.Errorf("event group: %w", err)
	}
	for _, it := range items {
		ev, err := Decode(it)
		if err != nil {
			bad = append(bad, it)
			continue
		}
		evs = append(evs, ev)
	}
	return evs, bad, nil
}
