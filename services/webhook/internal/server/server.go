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

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	ops.API
	DB          *sqlx.DB
	Idempotency *idempotency.Store
	// Guard checks endpoint URLs (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE).
	Guard urlguard.Policy
	// Limits cap the subscriptions of an owner (WEBHOOK_MAX_PER_OWNER, WEBHOOK_MAX_PER_URL); the
	// zero value is subscription.DefaultLimits.
	Limits subscription.Limits
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// New is the API's HTTP handler (ops.API.Handler).
func New(d Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Limits == (subscription.Limits{}) {
		d.Limits = subscription.DefaultLimits
	}
	subs := subscription.NewStore(d.DB)
	return d.Handler(web.DefaultBodyLimit, func(r gin.IRouter) {
		subscription.NewHandler(subs, d.Guard, d.Limits, d.Now).Routes(r, d.Idempotency.Middleware())
		delivery.NewHandler(delivery.NewStore(d.DB), subs, d.Now).Routes(r)
	})
}
