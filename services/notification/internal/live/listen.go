package live

import (
	"context"
	"encoding/json"
	"time"

	"ccplatform/pkg/mq"

	"go.uber.org/zap"
)

// Listen consumes this process's own queue and pushes each event to the hub until ctx is done.
// Events are acked whether or not the user is online here: each process sees every event.
func Listen(ctx context.Context, conn *mq.Conn, queue string, hub *Hub, log *zap.Logger) error {
	return conn.Consume(ctx, mq.ConsumerConfig{Queue: queue, Tag: "notification-live", Prefetch: 512, BatchSize: 64, BatchWait: time.Millisecond},
		func(_ context.Context, batch []mq.Delivery) []mq.Result {
			results := make([]mq.Result, len(batch))
			for _, d := range batch {
				var e Event
				if err := json.Unmarshal(d.Body, &e); err != nil {
					// Nothing to retry and no one to tell: a live push is best effort.
					log.Warn("live: undecodable event dropped", zap.String("message_id", d.MessageId), zap.Error(err))
					continue
				}
				hub.Push(e.UserID, e.Notification)
			}
			return results
		})
}
