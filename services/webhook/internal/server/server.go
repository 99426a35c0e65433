// Package server assembles the webhook API's HTTP handler: the engine, its middleware and every
// area's routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"net/http"
	"time"

	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"
	"ccplatform/services/webhook/internal/delivery"
	"ccplatform/services/webhook/internal/subscription"
	"ccplatform/services/webhook/internal/urlguard"

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
	Idempotency   *idempotency.Store
	// Guard checks endpoint URLs (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE).
	Guard urlguard.Policy
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// New is the API's HTTP handler. Routes are registered without a trailing slash and answer with
// one too. Everything but the ops endpoints requires the internal token.
func New(d Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	e := web.NewEngine(d.Log, web.DefaultBodyLimit, d.Ops.HTTPMetrics())
	d.Ops.Routes(e)
	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	subs := subscription.NewStore(d.DB)
	subscription.NewHandler(subs, d.Guard, d.Now).Routes(r, d.Idempotency.Middleware())
	delivery.NewHandler(delivery.NewStore(d.DB), subs, d.Now).Routes(r)
	return web.TrimTrailingSlash(e)
}
