// Package server assembles the order service's HTTP handler: the engine, its middleware and every
// area's routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"net/http"

	"ccplatform/pkg/customfield"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"
	"ccplatform/services/order/internal/callattempt"
	"ccplatform/services/order/internal/order"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	// Ops serves /livez, /readyz and /metrics and counts every request; main adds its checks.
	Ops           *ops.Ops
	DB            *sqlx.DB
	Log           *zap.Logger
	InternalToken string
	// Users is the client of the user service, which knows users and agent groups.
	Users       *svcclient.Client
	Idempotency *idempotency.Store
}

// New is the service's HTTP handler. Routes are registered without a trailing slash and answer
// with one too. Everything but the ops endpoints requires the internal token.
func New(d Deps) http.Handler {
	e := web.NewEngine(d.Log, web.DefaultBodyLimit, d.Ops.HTTPMetrics())
	// /livez, /readyz and /metrics need no token: orchestrators and Prometheus call them.
	d.Ops.Routes(e)

	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	idempotent := d.Idempotency.Middleware()
	fields := customfield.NewStore(d.DB)
	attempts := callattempt.NewStore(d.DB)
	orders := order.NewStore(d.DB)
	order.NewHandler(order.NewService(orders, fields, attempts, order.NewUserDirectory(d.Users))).Routes(r, idempotent)
	callattempt.NewHandler(attempts).Routes(r, idempotent)
	customfield.NewHandler(fields).Routes(r)
	return web.TrimTrailingSlash(e)
}
