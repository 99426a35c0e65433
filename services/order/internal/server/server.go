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

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	ops.API
	DB *sqlx.DB
	// Users is the client of the user service, which knows users and agent groups.
	Users       *svcclient.Client
	Idempotency *idempotency.Store
}

// New is the service's HTTP handler (ops.API.Handler).
func New(d Deps) http.Handler {
	idempotent := d.Idempotency.Middleware()
	fields := customfield.NewStore(d.DB)
	attempts := callattempt.NewStore(d.DB)
	orders := order.NewStore(d.DB)
	return d.Handler(web.DefaultBodyLimit, func(r gin.IRouter) {
		order.NewHandler(order.NewService(orders, fields, attempts, order.NewUserDirectory(d.Users))).Routes(r, idempotent)
		callattempt.NewHandler(attempts).Routes(r, idempotent)
		customfield.NewHandler(fields).Routes(r)
	})
}
