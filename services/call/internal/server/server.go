// Package server assembles the call service's HTTP handler: the engine, its middleware and the
// call routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"net/http"

	"ccplatform/pkg/ops"
	"ccplatform/pkg/orderscope"
	"ccplatform/pkg/web"
	"ccplatform/services/call/internal/call"

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
	// Scopes tells which orders a caller may see (the order service).
	Scopes *orderscope.Resolver
}

// New is the service's HTTP handler. Routes are registered without a trailing slash and answer
// with one too. Everything but the ops endpoints requires the internal token.
func New(d Deps) http.Handler {
	e := web.NewEngine(d.Log, web.DefaultBodyLimit, d.Ops.HTTPMetrics())
	// /livez, /readyz and /metrics need no token: orchestrators and Prometheus call them.
	d.Ops.Routes(e)

	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	call.NewHandler(call.NewStore(d.DB), d.Scopes).Routes(r)
	return web.TrimTrailingSlash(e)
}
