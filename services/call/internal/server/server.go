// Package server assembles the call service's HTTP handler: the engine, its middleware and the
// call routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"net/http"

	"ccplatform/pkg/ops"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
	"ccplatform/services/call/internal/call"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	ops.API
	DB *sqlx.DB
	// Scopes tells which orders a caller may see (the order service).
	Scopes *visibleorders.Resolver
}

// New is the service's HTTP handler (ops.API.Handler).
func New(d Deps) http.Handler {
	return d.Handler(web.DefaultBodyLimit, func(r gin.IRouter) {
		call.NewHandler(call.NewStore(d.DB), d.Scopes).Routes(r)
	})
}
