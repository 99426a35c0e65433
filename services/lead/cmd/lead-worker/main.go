// Command lead-worker consumes the lead.jobs queue: it checks each queued create and stores the
// leads of a batch in one transaction, recording every job's outcome for the status route. It also
// consumes lead.call-finished: each finished call updates its lead's attempts, status and next
// call time. And it turns the rows of bulk imports into leads, a chunk per transaction. It relays
// the lead events these transactions write into the WAL to the events exchange (one relay of
// lead-api and lead-worker holds the database's logical slot at a time).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/diag"
	"ccplatform/services/lead/internal/imports"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/wiring"

	"go.uber.org/zap"
)

// Config is read from the environment (services/lead/README.md).
type Config struct {
	wiring.Settings
	// HTTPAddr serves /livez, /readyz and /metrics (docs/operations.md).
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8093"`
	// Concurrency is the number of channels consuming in parallel, each handling its own batches.
	Concurrency int `env:"WORKER_CONCURRENCY" envDefault:"4"`
	// Prefetch bounds unacked jobs per channel; it must exceed BatchSize for batches to fill.
	Prefetch  int           `env:"WORKER_PREFETCH" envDefault:"400"`
	BatchSize int           `env:"WORKER_BATCH_SIZE" envDefault:"200"`
	BatchWait time.Duration `env:"WORKER_BATCH_WAIT" envDefault:"10ms"`
	// MaxAttempts is how often a job the database refuses for no known reason is tried before it
	// goes to lead.jobs.dead.
	MaxAttempts int `env:"WORKER_MAX_ATTEMPTS" envDefault:"5"`

	// The call.finished consumer: events are few next to lead creates, and each batch locks the
	// leads it names, so it has settings of its own.
	CallFinishedConcurrency int           `env:"CALL_FINISHED_CONCURRENCY" envDefault:"2"`
	CallFinishedPrefetch    int           `env:"CALL_FINISHED_PREFETCH" envDefault:"200"`
	CallFinishedBatchSize   int           `env:"CALL_FINISHED_BATCH_SIZE" envDefault:"100"`
	CallFinishedBatchWait   time.Duration `env:"CALL_FINISHED_BATCH_WAIT" envDefault:"20ms"`
	// CallFinishedMaxAttempts is how often an event the database refuses for no known reason is
	// tried before it goes to lead.call-finished.dead.
	CallFinishedMaxAttempts int `env:"CALL_FINISHED_MAX_ATTEMPTS" envDefault:"5"`

	// Bulk imports: runners settling chunks side by side (they share an import), rows settled per
	// transaction, and how often an idle runner looks for a new import (internal/imports).
	ImportRunners int           `env:"IMPORT_RUNNERS" envDefault:"2"`
	ImportChunk   int           `env:"IMPORT_CHUNK" envDefault:"500"`
	ImportIdle    time.Duration `env:"IMPORT_IDLE" envDefault:"1s"`
}

func main() {
	// The one operator command: replaying lead events after a lost slot (replay.go).
	if len(os.Args) > 1 && os.Args[1] == "replay-events" {
		cli.Main("lead-worker", replayUsage, replay)
	}
	app.Main("lead-worker", run)
}

// run consumes until ctx is done: the batches in hand finish (and are acked), the rest goes back
// to the broker; then the broker and the database are closed.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := wiring.OpenDB(ctx, cfg.Settings)
	if err != nil {
		return err
	}
	defer conn.Close()
	o.Database(conn.DB)
	leads, dir, cat := wiring.Leads(cfg.Settings, conn)
	inval := orders.NewInvalidation(dir, "lead-worker", log)
	broker := mq.Dial(cfg.Broker.URL, "lead-worker", log, mq.WorkQueue(asynccreate.Queue), mq.EventExchange(event.Exchange),
		mq.Subscription(callresult.Exchange, callresult.Queue, callresult.FinishedKey), inval.Topology())
	defer broker.Close()
	o.Broker(broker)
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	relay, err := wiring.Relay(cfg.Settings, conn, pub, "lead-worker", log, o.Registry)
	if err != nil {
		return err
	}
	results := callresult.NewStore(conn, cat)
	calls := callresult.NewConsumer(results, dir, log)

	jobs := asynccreate.NewWorker(conn, leads, log, cfg.BatchSize).Counting(asynccreate.NewStateCounter(o.Registry))
	imported := imports.NewRunner(conn, leads, log, cfg.ImportChunk, cfg.ImportIdle).Counting(imports.NewRowCounter(o.Registry))
	diag.Pprof(ctx, cfg.PprofAddr, log)
	var tasks app.Tasks
	tasks.Background("order events", func(ctx context.Context) error { return inval.Run(ctx, broker) })
	// Stopped after the consumers and the import runners, so the events of their last batches go
	// out before the publisher closes; what it leaves waits in the slot for the next relay to hold it.
	tasks.Background("event relay", app.Every(relay.Run))
	tasks.Background("dialing statistics purge", app.Every(func(ctx context.Context) {
		results.PurgeStatsHourly(ctx, func(err error) { log.Warn("purge dialing statistics", zap.Error(err)) })
	}))
	tasks.Work("consumer "+callresult.Queue, func(ctx context.Context) error {
		log.Info("consuming", zap.String("queue", callresult.Queue), zap.Int("workers", cfg.CallFinishedConcurrency))
		return broker.Consume(ctx, mq.ConsumerConfig{
			Queue: callresult.Queue, Prefetch: cfg.CallFinishedPrefetch, BatchSize: cfg.CallFinishedBatchSize,
			BatchWait: cfg.CallFinishedBatchWait, Workers: cfg.CallFinishedConcurrency,
			MaxAttempts: cfg.CallFinishedMaxAttempts, Tag: "lead-worker-calls",
		}, calls.Handle)
	})
	tasks.Work("consumer "+asynccreate.Queue, func(ctx context.Context) error {
		log.Info("consuming", zap.String("queue", asynccreate.Queue), zap.Int("workers", cfg.Concurrency),
			zap.Int("prefetch", cfg.Prefetch), zap.Int("batch", cfg.BatchSize))
		return broker.Consume(ctx, mq.ConsumerConfig{
			Queue: asynccreate.Queue, Prefetch: cfg.Prefetch, BatchSize: cfg.BatchSize, BatchWait: cfg.BatchWait,
			Workers: cfg.Concurrency, MaxAttempts: cfg.MaxAttempts, Tag: "lead-worker",
			OnDeadLetter: jobs.DeadLettered,
		}, jobs.Handle)
	})
	for i := range max(cfg.ImportRunners, 1) {
		tasks.Work(fmt.Sprintf("imports %d", i+1), imported.Run)
	}
	return o.ServeWhile(ctx, cfg.HTTPAddr, log, tasks.Run)
}
