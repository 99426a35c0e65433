// Command call serves the Call resource (listCalls and getCall) from the calls schema, which
// call-ingest fills from the telephony platform's events.
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/visibleorders"
	"ccplatform/services/call/internal/migrations"
	"ccplatform/services/call/internal/server"

	"go.uber.org/zap"
)

// Config is read from the environment (docs/architecture.md).
type Config struct {
	config.Common
	config.Database
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8084"`
	// OrderURL is the order service, which tells which orders (and so which calls) a caller sees.
	OrderURL string `env:"ORDER_URL" envDefault:"http://127.0.0.1:8082"`
}

// orderTimeout bounds a question to the order service.
const orderTimeout = 3 * time.Second

func main() { app.Main("call", run) }

// run serves until ctx is done, then drains in-flight requests and closes the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	orders := svcclient.New("order", cfg.OrderURL, cfg.InternalToken, orderTimeout)
	h := server.New(server.Deps{API: ops.API{Ops: o, Log: log, InternalToken: cfg.InternalToken}, DB: conn,
		Scopes: visibleorders.New(orders, visibleorders.DefaultTTL)})
	var tasks app.Tasks
	tasks.HTTP(cfg.HTTPAddr, h, log)
	return tasks.Run(ctx)
}
