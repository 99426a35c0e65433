// Package server assembles the report service's HTTP handler: the engine, its middleware and the
// report routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"net/http"
	"time"

	"ccplatform/pkg/ops"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
	"ccplatform/services/report/internal/agents"
	"ccplatform/services/report/internal/live"
	"ccplatform/services/report/internal/orders"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	ops.API
	DB *sqlx.DB
	// Scopes tells which orders a caller may see (the order service).
	Scopes *visibleorders.Resolver
	// Catalog is the lead-status catalog (the lead service).
	Catalog orders.Catalog
	// Live is the live stream's hub (its snapshots are taken by whoever runs it).
	Live *live.Hub
	// Heartbeat is the longest a live stream goes without an event (live.Heartbeat when 0).
	Heartbeat time.Duration
	// Now is the clock: an agent's current state lasts until now (time.Now when nil).
	Now func() time.Time
}

// New is the service's HTTP handler (ops.API.Handler).
func New(d Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Heartbeat == 0 {
		d.Heartbeat = live.Heartbeat
	}
	return d.Handler(web.DefaultBodyLimit, func(r gin.IRouter) {
		orders.NewHandler(orders.NewStore(d.DB), d.Scopes, d.Catalog).Routes(r)
		agents.NewHandler(agents.NewStore(d.DB), d.Scopes, d.Now).Routes(r)
		live.NewHandler(d.Live, d.Scopes, d.Heartbeat).Routes(r)
	})
}
