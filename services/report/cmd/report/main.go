// Command report serves the campaign reports (JSON or CSV) from the aggregates report-worker
// keeps in the reports schema, and the live stream of the orders being worked.
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/visibleorders"
	"ccplatform/services/report/internal/live"
	"ccplatform/services/report/internal/migrations"
	"ccplatform/services/report/internal/server"
	"ccplatform/services/report/internal/statuses"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Config is read from the environment (services/report/README.md).
type Config struct {
	config.Common
	config.Database
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8087"`
	// OrderURL tells which orders a caller sees; LeadURL is the lead-status catalog.
	OrderURL string `env:"ORDER_URL" envDefault:"http://127.0.0.1:8082"`
	LeadURL  string `env:"LEAD_URL" envDefault:"http://127.0.0.1:8083"`
}

// serviceTimeout bounds a question to the order or the lead service.
const serviceTimeout = 3 * time.Second

func main() { app.Main("report", run) }

// run serves until ctx is done, then ends the live streams, drains in-flight requests and closes
// the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	orders := svcclient.New("order", cfg.OrderURL, cfg.InternalToken, serviceTimeout)
	defer orders.CloseIdleConnections()
	leads := svcclient.New("lead", cfg.LeadURL, cfg.InternalToken, serviceTimeout)
	defer leads.CloseIdleConnections()
	hub := live.NewHub(live.NewSource(conn, leads, time.Now).Take, live.Tick, log)
	o.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "report_live_streams",
		Help: "Live streams (GET /v2/report/live/) open on this process."}, func() float64 { return float64(hub.Streams()) }))
	// Streams never end by themselves: they must be closed for the server to drain.
	stopStreams := context.AfterFunc(ctx, hub.Close)
	defer stopStreams()
	h := server.New(server.Deps{API: ops.API{Ops: o, Log: log, InternalToken: cfg.InternalToken}, DB: conn,
		Scopes: visibleorders.New(orders, visibleorders.DefaultTTL), Catalog: statuses.New(leads), Live: hub})
	var tasks app.Tasks
	tasks.Background("live snapshots", hub.Run)
	tasks.HTTP(cfg.HTTPAddr, h, log)
	return tasks.Run(ctx)
}
