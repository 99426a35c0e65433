// Command order serves orders, call-attempt interval groups and the order custom-field catalog.
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/outbox"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"
	"ccplatform/services/order/internal/migrations"
	"ccplatform/services/order/internal/order"
	"ccplatform/services/order/internal/server"

	"go.uber.org/zap"
)

// Config is read from the environment (docs/architecture.md).
type Config struct {
	config.Common
	config.Database
	config.Broker
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8082"`
	UserURL  string `env:"USER_URL" envDefault:"http://127.0.0.1:8081"`
}

// userTimeout bounds a call to the user service; an order create waits for it.
const userTimeout = 3 * time.Second

func main() { app.Main("order", run) }

// run serves until ctx is done, then drains in-flight requests, stops the event relay, and closes
// the broker and the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := migrations.Schema.Open(ctx, cfg.Database.URL, cfg.MaxConns)
	if err != nil {
		return err
	}
	defer conn.Close()
	o.Database(conn.DB)
	// The broker is not needed to serve: updates write their events to the outbox, and the relay
	// publishes them whenever the (self-healing) connection is up.
	broker := mq.Dial(cfg.Broker.URL, "order", log, mq.EventExchange(order.EventsExchange))
	defer broker.Close()
	o.Registry.MustRegister(broker.Collectors()...)
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	backlog := outbox.NewCollector(conn)
	o.Registry.MustRegister(backlog)
	var tasks app.Tasks
	// The relay keeps publishing while the HTTP server drains and stops before the publisher and
	// the connection close; whatever it has not published by then waits in the outbox for the
	// next start or another replica.
	relay := &outbox.Relay{DB: conn, Publisher: pub, Log: log, Published: backlog.Published()}
	tasks.Background("outbox relay", app.Every(relay.Run))
	keys := idempotency.New(conn, log).CountReplays(o.Registry)
	tasks.Background("idempotency purge", app.Every(func(ctx context.Context) { keys.PurgeEvery(ctx, time.Hour) }))
	h := server.New(server.Deps{
		Ops:           o,
		DB:            conn,
		Log:           log,
		InternalToken: cfg.InternalToken,
		Users:         svcclient.New("user", cfg.UserURL, cfg.InternalToken, userTimeout),
		Idempotency:   keys,
	})
	tasks.Work("http", func(ctx context.Context) error {
		return web.ListenAndServe(ctx, cfg.HTTPAddr, h, web.DefaultTimeouts, log)
	})
	return tasks.Run(ctx)
}
