// Command call-ingest consumes the telephony platform's call events (queue telephony.calls),
// stores each call once and publishes call.finished for it (docs/events.md).
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/telephony"
	"ccplatform/services/call/internal/ingest"
	"ccplatform/services/call/internal/migrations"

	"go.uber.org/zap"
)

// Config is read from the environment (docs/architecture.md).
type Config struct {
	config.Common
	config.Database
	config.Broker
	// HTTPAddr serves /livez, /readyz and /metrics (docs/operations.md).
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8094"`
	// Queue is the platform's queue (telephony.Queue when empty); tests use one of their own.
	Queue string `env:"INGEST_QUEUE"`
	// Batching: one transaction and one multi-row INSERT per batch (docs/events.md).
	Prefetch  int           `env:"INGEST_PREFETCH" envDefault:"256"`
	BatchSize int           `env:"INGEST_BATCH_SIZE" envDefault:"100"`
	BatchWait time.Duration `env:"INGEST_BATCH_WAIT" envDefault:"20ms"`
	Workers   int           `env:"INGEST_WORKERS" envDefault:"2"`
	// MaxUnackedAge: a delivery held longer than this makes /readyz and the health check report the
	// consumer degraded (docs/operations.md). A normal batch takes at most three steps of
	// StoreTimeout (its catalog read, its write, its publish: 90 s).
	MaxUnackedAge time.Duration `env:"INGEST_MAX_UNACKED_AGE" envDefault:"2m"`
}

func main() { app.Main("call-ingest", run) }

// run consumes until ctx is done: the batches in hand finish (commit, confirm, ack), the rest
// goes back to the broker; then the broker connection and the database close, the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	if cfg.Queue == "" {
		cfg.Queue = telephony.Queue
	}
	broker := mq.Dial(cfg.Broker.URL, "call-ingest", log, mq.WorkQueue(cfg.Queue), mq.EventExchange(ingest.Exchange))
	defer broker.Close()
	o.Broker(broker)
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	consumer := ingest.NewConsumer(ingest.NewStore(conn), pub, log)
	log.Info("consuming", zap.String("queue", cfg.Queue))
	var tasks app.Tasks
	tasks.Work("consumer "+cfg.Queue, func(ctx context.Context) error {
		return broker.Consume(ctx, mq.ConsumerConfig{
			Queue:     cfg.Queue,
			Prefetch:  cfg.Prefetch,
			BatchSize: cfg.BatchSize,
			BatchWait: cfg.BatchWait,
			Workers:   cfg.Workers,
			Tag:       "call-ingest",
			// Past it the batch is stuck, not slow.
			MaxUnackedAge: cfg.MaxUnackedAge,
		}, consumer.Handle)
	})
	return o.ServeWhile(ctx, cfg.HTTPAddr, log, tasks.Run)
}
