package orders

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"ccplatform/pkg/mq"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/zap"
)

// Event names of the order service (docs/architecture.md, "Messaging").
const (
	EventsExchange = "events"
	UpdatedKey     = "order.updated"
)

// Invalidation keeps a Directory in step with order.updated events through a queue of this
// process's own: exclusive and auto-deleted, so it lives exactly as long as the connection, and
// every replica hears every event.
type Invalidation struct {
	dir   *Directory
	queue string
	log   *zap.Logger
}

// NewInvalidation subscribes dir to order.updated events; process names the queue (for the
// broker's listing), a random suffix keeps replicas apart.
func NewInvalidation(dir *Directory, process string, log *zap.Logger) *Invalidation {
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	return &Invalidation{dir: dir, queue: process + ".order-updated." + hex.EncodeToString(suffix), log: log}
}

// Queue is the name of the process's own queue.
func (i *Invalidation) Queue() string { return i.queue }

// Topology declares the queue and its binding; pass it to mq.Dial. It runs on every (re)connect,
// and drops the whole cache each time: events published while the connection was down are lost
// with the old queue.
func (i *Invalidation) Topology() mq.Topology {
	return func(ch *amqp.Channel) error {
		i.dir.Clear()
		if err := mq.EventExchange(EventsExchange)(ch); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare(i.queue, false, true, true, false, nil); err != nil {
			return fmt.Errorf("declare %s: %w", i.queue, err)
		}
		if err := ch.QueueBind(i.queue, UpdatedKey, EventsExchange, false, nil); err != nil {
			return fmt.Errorf("bind %s: %w", i.queue, err)
		}
		return nil
	}
}

// Run consumes the events until ctx is done.
func (i *Invalidation) Run(ctx context.Context, conn *mq.Conn) error {
	return conn.Consume(ctx, mq.ConsumerConfig{Queue: i.queue, Prefetch: 64, BatchSize: 64, Workers: 1, Tag: i.queue}, i.handle)
}

func (i *Invalidation) handle(_ context.Context, batch []mq.Delivery) []mq.Result {
	out := make([]mq.Result, len(batch))
	for _, d := range batch {
		var ev struct {
			OrderID int64 `json:"orderId"`
		}
		if err := json.Unmarshal(d.Body, &ev); err != nil || ev.OrderID <= 0 {
			// An event that names no order cannot say what changed: forget everything rather
			// than keep something stale.
			i.log.Warn("orders: unreadable order.updated event, dropping the whole cache", zap.String("message_id", d.MessageId))
			i.dir.Clear()
			continue
		}
		i.dir.Drop(ev.OrderID)
	}
	return out
}
