// Command webhook-dispatcher delivers domain events to partners' endpoints: it consumes the events
// exchange (queue webhook.events) into deliveries, one per subscription that may see each event,
// and sends them signed, with retries, without one endpoint holding up another.
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/outbox"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/visibleorders"
	"ccplatform/services/webhook/internal/delivery"
	"ccplatform/services/webhook/internal/fanout"
	"ccplatform/services/webhook/internal/migrations"
	"ccplatform/services/webhook/internal/owner"
	"ccplatform/services/webhook/internal/urlguard"

	"go.uber.org/zap"
)

// Config is read from the environment (services/webhook/README.md).
type Config struct {
	config.Common
	config.Database
	config.Broker
	// HTTPAddr serves /livez, /readyz and /metrics (docs/operations.md).
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8096"`
	// OrderURL tells which orders a subscription's owner may see.
	OrderURL string `env:"ORDER_URL" envDefault:"http://127.0.0.1:8082"`
	// UserURL tells whether a subscription's owner is still active.
	UserURL string `env:"USER_URL" envDefault:"http://127.0.0.1:8081"`
	// AllowPrivate lets deliveries reach loopback and private addresses (tests, development).
	AllowPrivate bool `env:"WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	// AllowPorts are the ports a delivery may connect to (WEBHOOK_ALLOW_PRIVATE lifts this rule too).
	AllowPorts  []int `env:"WEBHOOK_ALLOW_PORTS" envDefault:"443" envSeparator:","`
	Workers     int   `env:"WEBHOOK_WORKERS" envDefault:"128"`
	PerEndpoint int   `env:"WEBHOOK_PER_ENDPOINT" envDefault:"16"`
	// Poll is the pause after a scan that found nothing due.
	Poll time.Duration `env:"WEBHOOK_POLL_INTERVAL" envDefault:"100ms"`
	// ClaimFor is how long the deliveries of a dispatcher that died wait before another sends
	// them (at least twice the 10 s attempt time-out).
	ClaimFor time.Duration `env:"WEBHOOK_CLAIM_FOR" envDefault:"1m"`
	// LogRetention is how long delivered and failed deliveries stay in the log (pending ones stay
	// until they end, whatever their age).
	LogRetention time.Duration `env:"WEBHOOK_LOG_RETENTION" envDefault:"168h"`
	// Prefetch and BatchSize bound the events the fan-out holds and handles at once.
	Prefetch  int `env:"WEBHOOK_EVENTS_PREFETCH" envDefault:"200"`
	BatchSize int `env:"WEBHOOK_EVENTS_BATCH_SIZE" envDefault:"50"`
}

// orderTimeout bounds a call to the order service for an owner's scope, and to the user service
// for whether the owner is active.
const orderTimeout = 3 * time.Second

func main() { app.Main("webhook-dispatcher", run) }

// run fans out and delivers until ctx is done, then lets the attempts in flight finish and closes
// the broker and the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	broker := mq.Dial(cfg.Broker.URL, "webhook-dispatcher", log, fanout.Topology(), mq.WorkQueue(delivery.NotificationQueue))
	defer broker.Close()
	o.Broker(broker)
	pub := mq.NewPublisher(broker)
	defer pub.Close()

	orders := svcclient.New("order", cfg.OrderURL, cfg.InternalToken, orderTimeout)
	defer orders.CloseIdleConnections()
	fan := fanout.New(conn, visibleorders.New(orders, visibleorders.DefaultTTL), time.Now, log)
	users := svcclient.New("user", cfg.UserURL, cfg.InternalToken, orderTimeout)
	defer users.CloseIdleConnections()
	fan.CheckingOwners(owner.New(users, owner.TTL))
	sender := delivery.NewSender(urlguard.Policy{AllowPrivate: cfg.AllowPrivate, Ports: cfg.AllowPorts})
	defer sender.Close()
	store := delivery.NewStore(conn)
	d := delivery.NewDispatcher(store, sender, delivery.NotifyOwner,
		delivery.Config{Workers: cfg.Workers, PerEndpoint: cfg.PerEndpoint, Poll: cfg.Poll, ClaimFor: cfg.ClaimFor},
		log, time.Now, delivery.Jitter, delivery.NewMetrics(o.Registry))

	var tasks app.Tasks
	log.Info("consuming", zap.String("queue", fanout.Queue))
	tasks.Work("consumer "+fanout.Queue, func(ctx context.Context) error {
		return broker.Consume(ctx, mq.ConsumerConfig{Queue: fanout.Queue, Prefetch: cfg.Prefetch, BatchSize: cfg.BatchSize,
			BatchWait: 10 * time.Millisecond, Workers: 2, MaxAttempts: 5, Tag: "webhook-fanout"}, fan.Handle)
	})
	tasks.Work("dispatcher", d.Run)
	tasks.Background("delivery log purge", app.Every(func(ctx context.Context) {
		for ctx.Err() == nil {
			if _, err := store.Purge(ctx, time.Now().Add(-cfg.LogRetention)); err != nil && ctx.Err() == nil {
				log.Warn("webhooks: purge", zap.Error(err))
			}
			app.Sleep(ctx, time.Hour)
		}
	}))
	relay := outbox.NewRelay(conn, pub, log, o.Registry)
	tasks.Background("outbox relay", app.Every(relay.Run))
	return o.ServeWhile(ctx, cfg.HTTPAddr, log, tasks.Run)
}
