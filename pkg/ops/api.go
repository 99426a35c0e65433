package ops

import (
	"net/http"

	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
)

// API is what a service's HTTP handler is built on besides its routes; each service's
// internal/server embeds it in its Deps.
type API struct {
	// Ops serves /livez, /readyz and /metrics and counts every request; main adds its checks.
	Ops           *Ops
	Log           *zap.Logger
	InternalToken string
}

// Handler is a service's whole HTTP handler: the engine (web.NewEngine, admitting bodies up to
// bodyLimit), the ops endpoints, and the routes that routes registers on r, a group demanding the
// internal token. Routes are registered without a trailing slash and answer with one too.
func (a API) Handler(bodyLimit int64, routes func(r gin.IRouter)) http.Handler {
	e := web.NewEngine(a.Log, bodyLimit, a.Ops.HTTPMetrics())
	// /livez, /readyz and /metrics need no token: orchestrators and Prometheus call them.
	a.Ops.Routes(e)
	// Public routes come through the gateway, which sends the token too.
	routes(e.Group("", web.RequireInternalToken(a.InternalToken)))
	return web.TrimTrailingSlash(e)
}
