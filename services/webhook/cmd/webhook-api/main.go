// Command webhook-api serves the webhook subscriptions of partners: create, update, delete, list,
// rotate the signing secret, and each endpoint's delivery log with redelivery.
package main

import (
	"context"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/services/webhook/internal/migrations"
	"ccplatform/services/webhook/internal/server"
	"ccplatform/services/webhook/internal/subscription"
	"ccplatform/services/webhook/internal/urlguard"

	"go.uber.org/zap"
)

// Config is read from the environment (services/webhook/README.md).
type Config struct {
	config.Common
	config.Database
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8086"`
	// AllowHTTP accepts http:// endpoints (development); AllowPrivate accepts endpoints on
	// loopback and private addresses (tests, development). Both off is the secure default.
	AllowHTTP    bool `env:"WEBHOOK_ALLOW_HTTP" envDefault:"false"`
	AllowPrivate bool `env:"WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	// AllowPorts are the ports an endpoint may use (WEBHOOK_ALLOW_PRIVATE lifts this rule too).
	AllowPorts []int `env:"WEBHOOK_ALLOW_PORTS" envDefault:"443" envSeparator:","`
	// MaxPerOwner and MaxPerURL cap one user's subscriptions, and those to one URL: each is a
	// delivery per event.
	MaxPerOwner int `env:"WEBHOOK_MAX_PER_OWNER" envDefault:"25"`
	MaxPerURL   int `env:"WEBHOOK_MAX_PER_URL" envDefault:"3"`
}

func main() { app.Main("webhook-api", run) }

// run serves until ctx is done, then drains in-flight requests and closes the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	var tasks app.Tasks
	keys := idempotency.New(conn, log).CountReplays(o.Registry)
	tasks.Background("idempotency purge", keys.PurgeHourly)
	h := server.New(server.Deps{
		API: ops.API{Ops: o, Log: log, InternalToken: cfg.InternalToken}, DB: conn, Idempotency: keys,
		Guard:  urlguard.Policy{AllowHTTP: cfg.AllowHTTP, AllowPrivate: cfg.AllowPrivate, Ports: cfg.AllowPorts},
		Limits: subscription.Limits{PerOwner: cfg.MaxPerOwner, PerURL: cfg.MaxPerURL},
	})
	tasks.HTTP(cfg.HTTPAddr, h, log)
	return tasks.Run(ctx)
}
