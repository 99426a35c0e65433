// Command user is the user service: users, their API keys, and the internal routes the gateway
// and other services ask (key verification, user checks).
package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/visibleorders"
	"ccplatform/services/user/internal/agentstate"
	"ccplatform/services/user/internal/migrations"
	"ccplatform/services/user/internal/server"

	"go.uber.org/zap"
)

// Config is everything the service reads from the environment.
type Config struct {
	config.Common
	config.Database
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8081"`
	// AvatarPlaceholder is the image link of users without an avatar (the contract promises a link).
	AvatarPlaceholder string `env:"AVATAR_PLACEHOLDER_URL"`
	// MaxActiveKeys caps the active API keys a user makes through the API (operators' user-admin
	// is not capped).
	MaxActiveKeys int `env:"API_KEY_MAX_ACTIVE" envDefault:"10"`
	// OrderURL answers which orders each agent may take (the agent state list).
	OrderURL string `env:"ORDER_URL" envDefault:"http://127.0.0.1:8082"`
}

func main() { app.Main("user", run) }

// run serves until ctx is done, then drains requests and closes the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	if err := checkPlaceholder(cfg.AvatarPlaceholder); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	var tasks app.Tasks
	keys := idempotency.New(conn, log).CountReplays(o.Registry)
	tasks.Background("idempotency purge", keys.PurgeHourly)
	store := agentstate.NewStore(conn)
	o.Registry.MustRegister(agentstate.NewCollector(store))
	orders := visibleorders.New(svcclient.New("order", cfg.OrderURL, cfg.InternalToken, 5*time.Second), visibleorders.DefaultTTL)
	h := server.New(server.Deps{API: ops.API{Ops: o, Log: log, InternalToken: cfg.InternalToken}, DB: conn,
		AvatarPlaceholder: cfg.AvatarPlaceholder, Idempotency: keys,
		MaxActiveKeys: cfg.MaxActiveKeys, AgentOrders: func(ctx context.Context, agent identity.Caller) ([]int64, error) {
			v, err := orders.For(ctx, agent)
			return v.OrderIDs, err
		}})
	tasks.HTTP(cfg.HTTPAddr, h, log)
	return tasks.Run(ctx)
}

// checkPlaceholder refuses a placeholder that is not an absolute http(s) link at start, rather
// than handing clients a broken avatar in every answer.
func checkPlaceholder(raw string) error {
	if raw == "" {
		return nil // the default
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("AVATAR_PLACEHOLDER_URL %q: must be an absolute http(s) URL", raw)
	}
	return nil
}
