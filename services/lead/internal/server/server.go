// Package server assembles lead-api's HTTP handler: the engine, its middleware and every area's
// routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"context"
	"net/http"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/job"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/leadv1"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	DB            *sqlx.DB
	Log           *zap.Logger
	InternalToken string
	Leads         *lead.Service
	Catalog       *catalog.Store
	Accepter      *job.Accepter
	JobIDs        *job.IDs
	Broker        *mq.Conn
	Idempotency   *idempotency.Store
}

// New is lead-api's HTTP handler. Routes are registered without a trailing slash and answer with
// one too. Everything but the health check requires the internal token.
func New(d Deps) http.Handler {
	e := web.NewEngine(d.Log, web.DefaultBodyLimit)
	e.GET("/internal/health", health(d.DB, d.Broker))

	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	idempotent := d.Idempotency.Middleware()
	lead.NewHandler(d.Leads, d.Accepter).Routes(r, idempotent)
	leadv1.NewHandler(d.Leads, d.Accepter).Routes(r, idempotent)
	job.NewHandler(d.DB, d.JobIDs).Routes(r)
	catalog.NewHandler(d.Catalog).Routes(r)
	return web.TrimTrailingSlash(e)
}

// health answers whether lead-api can reach its database and the broker (used by the gateway's
// health check and the dev scripts, so it needs no token).
func health(conn *sqlx.DB, broker *mq.Conn) gin.HandlerFunc {
	return web.Handle(func(c *gin.Context) (any, error) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		if err := conn.PingContext(ctx); err != nil {
			return nil, apperr.Wrap(apperr.Unavailable, err, "database: unreachable")
		}
		if !broker.Connected() {
			return nil, apperr.Unavailablef("broker: not connected")
		}
		return gin.H{"database": "ok", "broker": "ok", "executionTime": time.Since(start).Seconds()}, nil
	})
}
