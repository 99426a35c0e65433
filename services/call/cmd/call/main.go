// Command call serves the Call resource (operations 12 and 13) from the calls schema, which
// call-ingest fills from the telephony platform's events.
package main

import (
	"context"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/db"
	"ccplatform/pkg/web"
	"ccplatform/services/call/internal/migrations"
	"ccplatform/services/call/internal/server"

	"go.uber.org/zap"
)

// Config is read from the environment (docs/architecture.md).
type Config struct {
	config.Common
	config.Database
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8084"`
}

func main() { app.Main("call", run) }

// run serves until ctx is done, then drains in-flight requests and closes the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger) error {
	conn, err := db.Open(ctx, cfg.Database.URL, migrations.Schema, cfg.MaxConns)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := migrations.Up(ctx, conn); err != nil {
		return err
	}
	h := server.New(server.Deps{DB: conn, Log: log, InternalToken: cfg.InternalToken})
	return web.ListenAndServe(ctx, cfg.HTTPAddr, h, web.DefaultTimeouts, log)
}
