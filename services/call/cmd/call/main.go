// Command call serves the Call resource (operations 12 and 13) from the calls schema, which
// call-ingest fills from the telephony platform's events.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"ccplatform/pkg/config"
	"ccplatform/pkg/db"
	"ccplatform/pkg/logging"
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

func main() {
	cfg, err := config.Load[Config]()
	if err != nil {
		fmt.Fprintln(os.Stderr, "call:", err)
		os.Exit(1)
	}
	log, err := logging.New("call", cfg.LogLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "call:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("call stopped", zap.Error(err))
		_ = log.Sync()
		os.Exit(1)
	}
	_ = log.Sync()
}

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
