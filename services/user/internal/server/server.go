// Package server assembles the user service's HTTP handler: the shared middleware, the health
// route, and every business package's routes behind the internal token.
package server

import (
	"net/http"

	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/user"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Deps is what the routes need.
type Deps struct {
	// Ops serves /livez, /readyz and /metrics and counts every request; main adds its checks.
	Ops           *ops.Ops
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
	e := web.NewEngine(d.Log, web.DefaultBodyLimit, d.Ops.HTTPMetrics())
	// /livez, /readyz and /metrics need no token: orchestrators and Prometheus call them.
	d.Ops.Routes(e)

	placeholder := d.AvatarPlaceholder
	if placeholder == "" {
		placeholder = user.DefaultAvatarPlaceholder
	}
	users := user.NewStore(d.DB)
	groups := agentgroup.NewStore(d.DB)
	idempotent := d.Idempotency.Middleware()

	// Public routes come through the gateway, which sends the token too: every route but the
	// ops endpoints demand it.
	r := e.Group("", web.RequireInternalToken(d.InternalToken))
	apikey.NewHandler(apikey.NewStore(d.DB), users).Routes(r, idempotent)
	user.NewHandler(users, placeholder).Routes(r)
	agentgroup.NewHandler(groups, users).Routes(r, idempotent)

	return web.TrimTrailingSlash(e)
}
