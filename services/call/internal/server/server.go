// Package server assembles the call service's HTTP handler: the engine, its middleware and the
// call routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"context"
	"net/http"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/orderscope"
	"ccplatform/pkg/web"
	"ccplatform/services/call/internal/call"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	DB            *sqlx.DB
	Log           *zap.Logger
	InternalToken string
	// Scopes tells which orders a caller may see (the order service).
	Scopes *orderscope.Resolver
}

// New is the service's HTTP handler. Routes are registered without a trailing slash and answer
// with one too. Everything but the health check requires the internal token.
func New(d Deps) http.Handler {
	e := web.NewEngine(d.Log, web.DefaultBodyLimit)
	e.GET("/internal/health", health(d.DB))

	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	call.NewHandler(call.NewStore(d.DB), d.Scopes).Routes(r)
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
