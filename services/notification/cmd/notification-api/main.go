// Command notification-api serves the notification operations: sending (queued for the worker),
// each user's inbox, and the live stream of a user's notifications.
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/live"
	"ccplatform/services/notification/internal/migrations"
	"ccplatform/services/notification/internal/recipient"
	"ccplatform/services/notification/internal/server"

	"go.uber.org/zap"
)

// Config is read from the environment (docs/architecture.md).
type Config struct {
	config.Common
	config.Database
	config.Broker
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8085"`
	UserURL  string `env:"USER_URL" envDefault:"http://127.0.0.1:8081"`
}

// userTimeout bounds a call to the user service; a private send waits for it.
const userTimeout = 3 * time.Second

func main() { app.Main("notification-api", run) }

// run serves until ctx is done, then ends the live streams, drains in-flight requests, and closes
// the broker and the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	liveQueue := live.OwnQueue()
	broker := mq.Dial(cfg.Broker.URL, "notification-api", log, mq.WorkQueue(command.Queue), live.QueueTopology(liveQueue))
	defer broker.Close()
	o.Broker(broker)
	publisher := mq.NewPublisher(broker)
	defer publisher.Close()

	hub := live.NewHub()
	// Streams never end by themselves: they must be closed for the server to drain.
	stopStreams := context.AfterFunc(ctx, hub.Close)
	defer stopStreams()
	var tasks app.Tasks
	tasks.Background("live listener", func(ctx context.Context) error { return live.Listen(ctx, broker, liveQueue, hub, log) })
	keys := idempotency.New(conn, log).CountReplays(o.Registry)
	tasks.Background("idempotency purge", keys.PurgeHourly)
	users := svcclient.New("user", cfg.UserURL, cfg.InternalToken, userTimeout)
	defer users.CloseIdleConnections()
	h := server.New(server.Deps{
		API:         ops.API{Ops: o, Log: log, InternalToken: cfg.InternalToken},
		DB:          conn,
		Users:       recipient.NewDirectory(users),
		Publisher:   publisher,
		Idempotency: keys,
		Hub:         hub,
	})
	tasks.HTTP(cfg.HTTPAddr, h, log)
	return tasks.Run(ctx)
}
