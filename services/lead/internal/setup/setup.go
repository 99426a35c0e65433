// Package setup is the wiring lead-api and lead-worker share: the settings both read, the
// database (opened and migrated), the order directory with its event subscription, and the lead
// rules. Each main stays a short list of explicit constructors.
package setup

import (
	"context"
	"time"

	"ccplatform/pkg/config"
	"ccplatform/pkg/db"
	"ccplatform/pkg/svcclient"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/migrations"
	"ccplatform/services/lead/internal/orders"

	"github.com/jmoiron/sqlx"
)

// Settings are read by both binaries (docs/architecture.md and services/lead/README.md).
type Settings struct {
	config.Common
	config.Database
	config.Broker
	OrderURL string `env:"ORDER_URL" envDefault:"http://127.0.0.1:8082"`
	// OrderCacheTTL bounds how long an order is trusted without an order.updated event.
	OrderCacheTTL time.Duration `env:"ORDER_CACHE_TTL" envDefault:"60s"`
	// AdSystems are the codes a source may name as <code>.ads or <code>.direct.
	AdSystems []string `env:"AD_SYSTEMS" envSeparator:","`
}

// orderTimeout bounds one question to the order service; a sync create waits for it.
const orderTimeout = 3 * time.Second

// Rules are the lead rules of the settings.
func (s Settings) Rules() lead.Rules {
	systems := s.AdSystems
	if len(systems) == 0 {
		systems = lead.DefaultAdSystems
	}
	return lead.Rules{AdSystems: systems}
}

// OpenDB opens the leads schema and migrates it.
func OpenDB(ctx context.Context, s Settings) (*sqlx.DB, error) {
	conn, err := db.Open(ctx, s.Database.URL, migrations.Schema, s.MaxConns)
	if err != nil {
		return nil, err
	}
	if err := migrations.Up(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// Leads is the lead service over conn, with an order directory that the caller keeps current
// through orders.NewInvalidation.
func Leads(s Settings, conn *sqlx.DB) (*lead.Service, *orders.Directory, *catalog.Store) {
	dir := orders.NewDirectory(svcclient.New("order", s.OrderURL, s.InternalToken, orderTimeout), s.OrderCacheTTL)
	cat := catalog.NewStore(conn)
	return lead.NewService(lead.NewStore(conn), dir, cat, s.Rules()), dir, cat
}
