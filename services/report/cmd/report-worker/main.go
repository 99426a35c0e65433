// Command report-worker keeps the campaign reports' aggregates current: it consumes the events
// exchange (queue report.events) into 15-minute buckets, each event once.
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/services/report/internal/ingest"
	"ccplatform/services/report/internal/migrations"

	"go.uber.org/zap"
)

// Config is read from the environment (services/report/README.md).
type Config struct {
	config.Common
	config.Database
	config.Broker
	// HTTPAddr serves /livez, /readyz and /metrics (docs/operations.md).
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8097"`
	// Prefetch and BatchSize bound the events the consumer holds and writes in one transaction.
	Prefetch  int `env:"REPORT_EVENTS_PREFETCH" envDefault:"512"`
	BatchSize int `env:"REPORT_EVENTS_BATCH_SIZE" envDefault:"200"`
}

func main() { app.Main("report-worker", run) }

// run consumes until ctx is done, then lets the batch in hand finish and closes the broker and the
// database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	broker := mq.Dial(cfg.Broker.URL, "report-worker", log, ingest.Topology())
	defer broker.Close()
	o.Broker(broker)

	consumer := ingest.NewConsumer(conn, log)
	var tasks app.Tasks
	log.Info("consuming", zap.String("queue", ingest.Queue))
	tasks.Work("consumer "+ingest.Queue, func(ctx context.Context) error {
		return broker.Consume(ctx, mq.ConsumerConfig{Queue: ingest.Queue, Prefetch: cfg.Prefetch, BatchSize: cfg.BatchSize,
			BatchWait: 20 * time.Millisecond, Workers: 2, MaxAttempts: 5, Tag: "report-worker"}, consumer.Handle)
	})
	return o.ServeWhile(ctx, cfg.HTTPAddr, log, tasks.Run)
}
