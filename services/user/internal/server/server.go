// Package server assembles the user service's HTTP handler: the shared middleware, the health
// route, and every business package's routes behind the internal token.
package server

import (
	"context"
	"net/http"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/web"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/user"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Deps is what the routes need.
type Deps struct {
	Log           *zap.Logger
	DB            *sqlx.DB
	InternalToken string
	// AvatarPlaceholder is the link shown for users without an avatar; empty means
	// user.DefaultAvatarPlaceholder.
	AvatarPlaceholder string
	// Idempotency stores the answers of keyed creates; main purges its expired keys.
	Idempotency *idempotency.Store
}

// New is the service's whole HTTP handler; paths answer with and without a trailing slash.
func New(d Deps) http.Handler {
	e := web.NewEngine(d.Log, web.DefaultBodyLimit)
	e.GET("/internal/health", web.Handle(health(d.DB)))

	placeholder := d.AvatarPlaceholder
	if placeholder == "" {
		placeholder = user.DefaultAvatarPlaceholder
	}
	users := user.NewStore(d.DB)
	groups := agentgroup.NewStore(d.DB)
	idempotent := d.Idempotency.Middleware()

	// Public routes come through the gateway, which sends the token too: every route but the
	// health check demands it.
	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	keyRoutes := apikey.NewHandler(apikey.NewStore(d.DB), users)
	keyRoutes.RegisterInternal(r)
	keyRoutes.RegisterPublic(r, idempotent)
	userRoutes := user.NewHandler(users, placeholder)
	userRoutes.RegisterPublic(r)
	userRoutes.RegisterInternal(r)
	groupRoutes := agentgroup.NewHandler(groups, users)
	groupRoutes.RegisterPublic(r, idempotent)
	groupRoutes.RegisterInternal(r)

	return web.TrimTrailingSlash(e)
}

// healthTimeout keeps the health answer quick when the database hangs: the gateway's health
// check waits on it.
const healthTimeout = 2 * time.Second

// health answers without a token, so scripts and the gateway's check can probe a starting service.
func health(conn *sqlx.DB) func(c *gin.Context) (any, error) {
	return func(c *gin.Context) (any, error) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), healthTimeout)
		defer cancel()
		if err := conn.PingContext(ctx); err != nil {
			return nil, apperr.Wrap(apperr.Unavailable, err, "database: unreachable")
		}
		return gin.H{"database": "ok"}, nil
	}
}
