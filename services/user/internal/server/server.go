// Package server assembles the user service's HTTP handler: the shared middleware, the health
// route, and every business package's routes behind the internal token.
package server

import (
	"net/http"
	"time"

	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/agentstate"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/user"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Deps is what the routes need.
type Deps struct {
	ops.API
	DB *sqlx.DB
	// AvatarPlaceholder is the link shown for users without an avatar; empty means
	// user.DefaultAvatarPlaceholder.
	AvatarPlaceholder string
	// Idempotency stores the answers of keyed creates; main purges its expired keys.
	Idempotency *idempotency.Store
	// MaxActiveKeys caps a user's active API keys made through the API (API_KEY_MAX_ACTIVE); 0 is
	// apikey.DefaultMaxActive.
	MaxActiveKeys int
	// AgentOrders, when set, adds to the agent state list the orders each agent may take.
	AgentOrders agentstate.OrdersOf
}

// New is the service's whole HTTP handler (ops.API.Handler).
func New(d Deps) http.Handler {
	placeholder := d.AvatarPlaceholder
	if placeholder == "" {
		placeholder = user.DefaultAvatarPlaceholder
	}
	users := user.NewStore(d.DB)
	groups := agentgroup.NewStore(d.DB)
	idempotent := d.Idempotency.Middleware()
	maxKeys := d.MaxActiveKeys
	if maxKeys == 0 {
		maxKeys = apikey.DefaultMaxActive
	}
	return d.Handler(web.DefaultBodyLimit, func(r gin.IRouter) {
		apikey.NewHandler(apikey.NewStore(d.DB), users, maxKeys).Routes(r, idempotent)
		user.NewHandler(users, placeholder).Routes(r)
		agentgroup.NewHandler(groups, users).Routes(r, idempotent)
		agentstate.NewHandler(agentstate.NewStore(d.DB), d.AgentOrders, time.Now).Routes(r)
	})
}
