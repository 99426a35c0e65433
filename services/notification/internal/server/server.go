// Package server assembles the notification API's HTTP handler: the engine, its middleware and
// every area's routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"net/http"
	"time"

	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/live"
	"ccplatform/services/notification/internal/notification"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	ops.API
	DB *sqlx.DB
	// Users checks that the target of a private notification exists (the user service).
	Users       command.Users
	Publisher   *mq.Publisher
	Idempotency *idempotency.Store
	Hub         *live.Hub
	// ConfirmTimeout bounds the wait for the broker's confirm of a command (command.ConfirmTimeout
	// when zero); Heartbeat is the idle interval of the live stream (15 s when zero).
	ConfirmTimeout time.Duration
	Heartbeat      time.Duration
}

// New is the API's HTTP handler (ops.API.Handler).
func New(d Deps) http.Handler {
	if d.ConfirmTimeout <= 0 {
		d.ConfirmTimeout = command.ConfirmTimeout
	}
	if d.Heartbeat <= 0 {
		d.Heartbeat = 15 * time.Second
	}
	return d.Handler(web.DefaultBodyLimit, func(r gin.IRouter) {
		command.NewHandler(d.Users, d.Publisher, d.ConfirmTimeout).Routes(r, d.Idempotency.Middleware())
		notification.NewHandler(notification.NewStore(d.DB)).Routes(r)
		live.NewHandler(d.Hub, d.Heartbeat).Routes(r)
	})
}
