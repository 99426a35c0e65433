// Package live pushes notifications to users who are online, over server-sent events. The worker
// publishes each notification to the live exchange (a fanout); every API process has its own
// exclusive queue bound to it and pushes the events to the streams it holds. A user is online
// while at least one of their streams is open; offline users find the record in their inbox.
package live

import (
	"context"
	"encoding/json"
	"fmt"

	"ccplatform/pkg/mq"
	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/notification"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Exchange is the fanout exchange live events are published to.
const Exchange = "notifications.live"

// MessageType is the type property of a live event.
const MessageType = "notification.delivered"

// Event is one notification for one user, as published to the exchange.
type Event struct {
	UserID       int64   `json:"userId"`
	Notification Message `json:"notification"`
}

// Message is what a stream receives: the notification and whether the interface opens it by
// itself (the urgent rule).
type Message struct {
	notification.View
	OpenAutomatically bool `json:"openAutomatically"`
}

// MessageOf is n as a stream shows it.
func MessageOf(n notification.Notification) Message {
	return Message{View: n.ToView(), OpenAutomatically: n.OpensAutomatically()}
}

// ExchangeTopology declares the live exchange.
func ExchangeTopology(ch *amqp.Channel) error {
	if err := ch.ExchangeDeclare(Exchange, amqp.ExchangeFanout, true, false, false, false, nil); err != nil {
		return fmt.Errorf("declare exchange %s: %w", Exchange, err)
	}
	return nil
}

// queueTTL drops events a process could not take in time: a live push that late is no longer live,
// and the record is in the inbox anyway.
const queueTTL = 30_000

// OwnQueue names a queue for one API process.
func OwnQueue() string { return Exchange + "." + uuid.NewString() }

// QueueTopology declares the process's own queue: exclusive to its connection (so it goes away
// with the process) and bound to the live exchange. It runs on every reconnect.
func QueueTopology(queue string) mq.Topology {
	return func(ch *amqp.Channel) error {
		if err := ExchangeTopology(ch); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare(queue, false, true, true, false, amqp.Table{
			"x-message-ttl": int32(queueTTL),
			"x-max-length":  int32(10_000),
		}); err != nil {
			return fmt.Errorf("declare %s: %w", queue, err)
		}
		if err := ch.QueueBind(queue, "", Exchange, false, nil); err != nil {
			return fmt.Errorf("bind %s: %w", queue, err)
		}
		return nil
	}
}

// Sender is the live channel of the delivery loop: it publishes the event; the delivery counts as
// sent once the broker confirmed it.
type Sender struct {
	publisher *mq.Publisher
}

// NewSender publishes through publisher.
func NewSender(publisher *mq.Publisher) *Sender { return &Sender{publisher: publisher} }

// Send publishes d's notification for its user.
func (s *Sender) Send(ctx context.Context, d delivery.Delivery) error {
	body, err := json.Marshal(Event{UserID: d.UserID, Notification: MessageOf(d.Notification)})
	if err != nil {
		return fmt.Errorf("encode live event: %w", err)
	}
	id := fmt.Sprintf("%d.live", d.ID)
	if err := s.publisher.Publish(ctx, Exchange, "", mq.Message{ID: id, Type: MessageType, Body: body}); err != nil {
		return fmt.Errorf("publish live event: %w", err)
	}
	return nil
}
