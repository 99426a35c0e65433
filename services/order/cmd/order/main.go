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
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The broker is not needed to serve: updates write their events to the outbox, and the relay
	// publishes them whenever the (self-healing) connection is up.
	broker := mq.Dial(cfg.Broker.URL, "order", log, mq.EventExchange(order.EventsExchange))
	defer broker.Close()
	o.Registry.MustRegister(broker.Collectors()...)
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	var tasks app.Tasks
	// The relay keeps publishing while the HTTP server drains and stops before the publisher and
	// the connection close; whatever it has not published by then waits in the outbox for the
	// next start or another replica.
	relay := outbox.NewRelay(conn, pub, log, o.Registry)
	tasks.Background("outbox relay", app.Every(relay.Run))
	keys := idempotency.New(conn, log).CountReplays(o.Registry)
	tasks.Background("idempotency purge", keys.PurgeHourly)
	h := server.New(server.Deps{
		API:         ops.API{Ops: o, Log: log, InternalToken: cfg.InternalToken},
		DB:          conn,
		Users:       svcclient.New("user", cfg.UserURL, cfg.InternalToken, userTimeout),
		Idempotency: keys,
	})
	tasks.HTTP(cfg.HTTPAddr, h, log)
	return tasks.Run(ctx)
}
