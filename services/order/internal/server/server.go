// Package server assembles the order service's HTTP handler: the engine, its middleware and every
// area's routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"context"
	"net/http"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"
	"ccplatform/services/order/internal/callattempt"
	"ccplatform/services/order/internal/order"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	DB            *sqlx.DB
	Log           *zap.Logger
	InternalToken string
	// Users is the client of the user service, which knows users and agent groups.
	Users       *svcclient.Client
	Idempotency *idempotency.Store
}

// New is the service's HTTP handler. Routes are registered without a trailing slash and answer
// with one too. Everything but the health check requires the internal token.
func New(d Deps) http.Handler {
	e := web.NewEngine(d.Log, web.DefaultBodyLimit)
	e.GET("/internal/health", health(d.DB))

	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	idempotent := d.Idempotency.Middleware()
	fields := customfield.NewStore(d.DB)
	attempts := callattempt.NewStore(d.DB)
	orders := order.NewStore(d.DB)
	order.NewHandler(orders, fields, attempts, order.NewUserDirectory(d.Users)).Routes(r, idempotent)
	callattempt.NewHandler(attempts).Routes(r, idempotent)
	customfield.NewHandler(fields).Routes(r)
	return web.TrimTrailingSlash(e)
}

// health answers whether the service can reach its database (used by the gateway's health check
// and the dev scripts, so it needs no token).
func health(conn *sqlx.DB) gin.HandlerFunc {
	return web.Handle(func(c *gin.Context) (any, error) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		if err := conn.PingContext(ctx); err != nil {
			return nil, apperr.Wrap(apperr.Unavailable, err, "database: unreachable")
		}
		return gin.H{"database": "ok", "executionTime": time.Since(start).Seconds()}, nil
	})
}
