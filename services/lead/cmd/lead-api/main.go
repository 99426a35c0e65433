// Command lead-api serves the lead operations (v1 and v2), the async-create job status, and the
// lead catalogs. Async creates are published to the lead.jobs queue for lead-worker; the events of
// creates and updates are relayed from the WAL (the database's logical slot, held by one relay of
// lead-api and lead-worker at a time) to the events exchange.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/event"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/clock"
	"ccplatform/services/lead/internal/diag"
	"ccplatform/services/lead/internal/imports"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/server"
	"ccplatform/services/lead/internal/upload"
	"ccplatform/services/lead/internal/wiring"

	"go.uber.org/zap"
)

// Config is read from the environment (services/lead/README.md).
type Config struct {
	wiring.Settings
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8083"`
	// UserURL is where the paced lease asks which agents are available.
	UserURL string `env:"USER_URL" envDefault:"http://127.0.0.1:8081"`
	// JobIDSecret signs job ids; every lead-api replica must share it. Default: derived from
	// INTERNAL_TOKEN, which they share already.
	JobIDSecret string `env:"JOB_ID_SECRET"`
	// ConfirmTimeout bounds the wait for the broker's confirm of an async create (then 503).
	ConfirmTimeout time.Duration `env:"JOB_CONFIRM_TIMEOUT" envDefault:"10s"`
	// ClockFile, in development only, is where the dialing queue reads the time (internal/clock):
	// the end-to-end tests set calling windows and lease expiry through it instead of waiting.
	ClockFile string `env:"CLOCK_FILE"`
	AppEnv    string `env:"APP_ENV" envDefault:"development"`
	// Bulk import uploads (internal/upload): how many may arrive at once per API key and in all,
	// the longest pause in a body and the longest arrival of a whole one, and where the files
	// are kept while they arrive.
	ImportUploadsPerKey int           `env:"IMPORT_UPLOADS_PER_KEY" envDefault:"2"`
	ImportUploads       int           `env:"IMPORT_UPLOADS" envDefault:"8"`
	ImportStallTimeout  time.Duration `env:"IMPORT_STALL_TIMEOUT" envDefault:"10s"`
	ImportUploadTime    time.Duration `env:"IMPORT_UPLOAD_TIME" envDefault:"5m"`
	ImportSpoolDir      string        `env:"IMPORT_SPOOL_DIR"`
}

func main() { app.Main("lead-api", run) }

// run serves until ctx is done, then drains in-flight requests, stops the event consumer, and
// closes the broker and the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := wiring.OpenDB(ctx, cfg.Settings)
	if err != nil {
		return err
	}
	defer conn.Close()
	o.Database(conn.DB)
	now, err := queueClock(cfg)
	if err != nil {
		return err
	}
	leads, dir, cat := wiring.Leads(cfg.Settings, conn)
	inval := orders.NewInvalidation(dir, "lead-api", log)
	broker := mq.Dial(cfg.Broker.URL, "lead-api", log, mq.WorkQueue(asynccreate.Queue), mq.EventExchange(event.Exchange),
		inval.Topology())
	defer broker.Close()
	o.Broker(broker)
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	// A channel of its own: a failed event publish that closes its channel must not nack the
	// confirms async accepts are waiting for.
	events := mq.NewPublisher(broker)
	defer events.Close()
	relay, err := wiring.Relay(cfg.Settings, conn, events, "lead-api", log, o.Registry)
	if err != nil {
		return err
	}

	var tasks app.Tasks
	tasks.Background("order events", func(ctx context.Context) error { return inval.Run(ctx, broker) })
	// Publishes the events of creates and updates while the HTTP server drains, and stops before
	// the publisher closes; what it leaves waits in the slot for the next relay to hold it.
	tasks.Background("event relay", app.Every(relay.Run))
	diag.Pprof(ctx, cfg.PprofAddr, log)
	keys := idempotency.New(conn, log).CountReplays(o.Registry)
	tasks.Background("idempotency purge", app.Every(func(ctx context.Context) { keys.PurgeEvery(ctx, time.Hour) }))
	ids := asynccreate.NewIDs(jobSecret(cfg))
	queue, dncList := wiring.Queue(conn, leads, dir, wiring.Agents(cfg.Settings, cfg.UserURL, agents.DefaultTTL), cat, now, o.Registry)
	h := server.New(server.Deps{
		API: ops.API{Ops: o, Log: log, InternalToken: cfg.InternalToken},
		DB:  conn, Leads: leads, Catalog: cat,
		Accepter: asynccreate.NewAccepter(pub, ids, cfg.ConfirmTimeout).Counting(asynccreate.NewStateCounter(o.Registry).WithLabelValues("accepted")), JobIDs: ids, Idempotency: keys,
		Dialer: queue, DNC: dncList,
		// Import ids are signed like job ids, under a secret of their own: neither passes for the other.
		Imports: imports.NewHandler(imports.NewStore(conn), asynccreate.NewIDs(jobSecret(cfg)+":imports"), cat.ByIDs, upload.NewGate(upload.Limits{
			PerKey: cfg.ImportUploadsPerKey, Total: cfg.ImportUploads, Stall: cfg.ImportStallTimeout,
			Whole: cfg.ImportUploadTime, Dir: cfg.ImportSpoolDir,
		}), log),
	})
	tasks.HTTP(cfg.HTTPAddr, h, log)
	return tasks.Run(ctx)
}

// queueClock is time.Now, or in development the time of CLOCK_FILE when it is set.
func queueClock(cfg Config) (func() time.Time, error) {
	if cfg.ClockFile == "" {
		return time.Now, nil
	}
	if cfg.AppEnv != app.Development {
		return nil, fmt.Errorf("CLOCK_FILE is for development only (APP_ENV is %q)", cfg.AppEnv)
	}
	if err := clock.Check(cfg.ClockFile); err != nil {
		return nil, err
	}
	return clock.FromFile(cfg.ClockFile), nil
}

func jobSecret(cfg Config) string {
	if cfg.JobIDSecret != "" {
		return cfg.JobIDSecret
	}
	sum := sha256.Sum256([]byte("lead.job-id:" + cfg.InternalToken))
	return hex.EncodeToString(sum[:])
}
