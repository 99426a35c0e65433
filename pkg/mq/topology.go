package mq

import (
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DeadLetterSuffix names a work queue's dead-letter queue.
const DeadLetterSuffix = ".dead"

// BrokerDeliveryLimit is the broker's own cap on redeliveries of one message: a safety net behind
// the consumer's MaxAttempts, for a consumer that crashes on a message before it can decide.
const BrokerDeliveryLimit = 50

// WorkQueue declares a durable quorum queue and its dead-letter queue (name + ".dead"); messages
// the broker gives up on are dead-lettered there too.
func WorkQueue(name string) Topology {
	return func(ch *amqp.Channel) error {
		if _, err := ch.QueueDeclare(name+DeadLetterSuffix, true, false, false, false,
			amqp.Table{"x-queue-type": "quorum"}); err != nil {
			return fmt.Errorf("declare %s: %w", name+DeadLetterSuffix, err)
		}
		if _, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{
			"x-queue-type":              "quorum",
			"x-delivery-limit":          BrokerDeliveryLimit,
			"x-dead-letter-exchange":    "",
			"x-dead-letter-routing-key": name + DeadLetterSuffix,
		}); err != nil {
			return fmt.Errorf("declare %s: %w", name, err)
		}
		return nil
	}
}

// EventExchange declares a durable topic exchange for events.
func EventExchange(name string) Topology {
	return func(ch *amqp.Channel) error {
		if err := ch.ExchangeDeclare(name, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare exchange %s: %w", name, err)
		}
		return nil
	}
}

// Subscription declares a work queue bound to an event exchange for the given routing keys.
func Subscription(exchange, queue string, keys ...string) Topology {
	declare := WorkQueue(queue)
	return func(ch *amqp.Channel) error {
		if err := EventExchange(exchange)(ch); err != nil {
			return err
		}
		if err := declare(ch); err != nil {
			return err
		}
		for _, k := range keys {
			if err := ch.QueueBind(queue, k, exchange, false, nil); err != nil {
				return fmt.Errorf("bind %s to %s (%s): %w", queue, exchange, k, err)
			}
		}
		return nil
	}
}
