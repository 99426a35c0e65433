package mq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"ccplatform/pkg/requestid"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/zap"
)

// Message is what services publish: a JSON body with its id and type.
type Message struct {
	// ID is the job or event UUID; it becomes message_id, which consumers use to deduplicate.
	ID      string
	Type    string
	Body    []byte
	Headers amqp.Table
}

// Publisher publishes persistent messages on one confirm-mode channel shared by all callers, so
// many requests' confirms are outstanding at once while each caller waits only for its own.
type Publisher struct {
	conn *Conn

	mu sync.Mutex
	ch *amqp.Channel
}

// NewPublisher publishes over conn.
func NewPublisher(conn *Conn) *Publisher { return &Publisher{conn: conn} }

// ErrNotConfirmed means the broker did not confirm before ctx ended: the message may or may not be
// stored, so the caller must not report success (a retry is safe: consumers deduplicate).
var ErrNotConfirmed = errors.New("mq: publish not confirmed")

// Publish sends msg to exchange with routing key and returns nil only once the broker confirmed
// it. A nack, or a channel or connection lost before the confirm, sends the message again on a
// fresh channel (on the next node after a lost connection) until ctx ends.
func (p *Publisher) Publish(ctx context.Context, exchange, key string, msg Message) error {
	pub := amqp.Publishing{
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		MessageId:    msg.ID,
		Type:         msg.Type,
		Timestamp:    time.Now().UTC(),
		Body:         msg.Body,
		Headers:      amqp.Table{},
	}
	for k, v := range msg.Headers {
		pub.Headers[k] = v
	}
	if id := requestid.From(ctx); id != "" {
		pub.Headers["request_id"] = id
	}
	ctx, span := startPublish(ctx, exchange, key, pub.Headers)
	defer span.End()
	m := p.conn.metrics
	published := m.publishes.WithLabelValues(exchange, key)
	bo := newBackoff(20*time.Millisecond, time.Second)
	for {
		ch, err := p.channel(ctx)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotConfirmed, err)
		}
		// Mandatory: a message no queue takes comes back (counted in mq_publish_returns_total)
		// instead of vanishing unseen; it is still confirmed.
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, pub)
		if err == nil {
			published.Inc()
			var acked bool
			acked, err = dc.WaitContext(ctx)
			if err == nil {
				result := "ack"
				if !acked {
					result = "nack"
				}
				m.confirms.WithLabelValues(exchange, key, result).Inc()
			}
			if err == nil && acked {
				return nil
			}
			if err == nil {
				err = errors.New("nacked or channel lost before the confirm")
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrNotConfirmed, err)
		}
		// A dead channel is replaced, and so is a live one that nacked: a quorum queue whose
		// leader moved to another node can nack every later publish of a channel opened before
		// the move, while a fresh channel's are confirmed. Closing it nacks the other callers'
		// outstanding confirms too; they re-send on the new channel (at least once, as after a
		// reconnect), and drop closes it only once.
		p.drop(ch)
		select {
		case <-time.After(bo.NextBackOff()):
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNotConfirmed, ctx.Err())
		}
	}
}

func (p *Publisher) channel(ctx context.Context) (*amqp.Channel, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil && !p.ch.IsClosed() {
		return p.ch, nil
	}
	ch, err := p.conn.Channel(ctx)
	if err != nil {
		return nil, err
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("mq: confirm mode: %w", err)
	}
	// The channel closes this when it closes, which ends the goroutine.
	returns := ch.NotifyReturn(make(chan amqp.Return, 16))
	go func(m *metrics) {
		for r := range returns {
			m.returns.WithLabelValues(r.Exchange, r.RoutingKey).Inc()
			p.conn.log.Warn("mq: message returned: no queue took it", zap.String("exchange", r.Exchange),
				zap.String("routing_key", r.RoutingKey), zap.String("message_id", r.MessageId))
		}
	}(p.conn.metrics)
	p.ch = ch
	return ch, nil
}

// drop forgets ch (if it is still current) so that the next publish opens a fresh channel.
func (p *Publisher) drop(ch *amqp.Channel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == ch {
		_ = ch.Close()
		p.ch = nil
	}
}

// Close closes the publisher's channel.
func (p *Publisher) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil {
		_ = p.ch.Close()
		p.ch = nil
	}
}
