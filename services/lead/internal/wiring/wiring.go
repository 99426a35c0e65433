// Package wiring builds the parts lead-api and lead-worker share: the settings both read, the
// database (opened and migrated), the order directory with its event subscription, the lead
// rules, and the relay of the lead events (through the database's logical slot). Each main stays a
// short list of explicit constructors.
package wiring

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"ccplatform/pkg/config"
	"ccplatform/pkg/db"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/phone"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/walrelay"
	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/dialer"
	"ccplatform/services/lead/internal/dnc"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/migrations"
	"ccplatform/services/lead/internal/orders"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
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
	// PprofAddr serves runtime profiles (internal/diag) when set; off by default.
	PprofAddr string `env:"PPROF_ADDR"`
	// LeadEditWindow is how long after their call with a lead an agent may edit it, in orders whose
	// agentLeadEditMode is during-call.
	LeadEditWindow time.Duration `env:"LEAD_EDIT_WINDOW" envDefault:"15m"`
}

// orderTimeout bounds one question to the order service; a sync create waits for it.
const orderTimeout = 3 * time.Second

// Rules are the lead rules of the settings.
func (s Settings) Rules() lead.Rules {
	systems := s.AdSystems
	if len(systems) == 0 {
		systems = lead.DefaultAdSystems
	}
	return lead.Rules{AdSystems: systems, Phones: phone.New(), EditWindow: s.LeadEditWindow}
}

// OpenDB opens the leads schema, makes the publication and the slot of the lead events if there
// are none, and migrates the schema. The slot comes first: it keeps only what is emitted after it exists, and
// migration 00012 moves the last rows of the old outbox into the WAL for it.
func OpenDB(ctx context.Context, s Settings) (*sqlx.DB, error) {
	dsn, err := oneRoundTrip(s.Database.URL)
	if err != nil {
		return nil, err
	}
	slot, err := Slot(s)
	if err != nil {
		return nil, err
	}
	conn, err := db.Open(ctx, dsn, migrations.Schema.Name, s.MaxConns)
	if err != nil {
		return nil, err
	}
	if _, err := walrelay.EnsureSlot(ctx, conn, slot, lead.EventsPublication); err != nil {
		_ = conn.Close()
		return nil, err
	}
	if err := migrations.Schema.Up(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// Slot is the logical slot of the lead events in the settings' database, named after it: slot
// names are cluster-wide, and each database (each test's own) has its slot.
func Slot(s Settings) (string, error) {
	name, err := walrelay.DatabaseOf(s.Database.URL)
	if err != nil {
		return "", err
	}
	return walrelay.SlotName(lead.EventsPrefix, name), nil
}

// Leads is the lead service over conn, with an order directory that the caller keeps current
// through orders.NewInvalidation.
func Leads(s Settings, conn *sqlx.DB) (*lead.Service, *orders.Directory, *catalog.Store) {
	dir := orders.NewDirectory(svcclient.New("order", s.OrderURL, s.InternalToken, orderTimeout), s.OrderCacheTTL)
	cat := catalog.NewStore(conn)
	return lead.NewService(lead.NewStore(conn), dir, cat, s.Rules()), dir, cat
}

// Agents asks the user service at userURL which agents may take a call (the paced lease), caching
// answers for ttl (agents.DefaultTTL when 0).
func Agents(s Settings, userURL string, ttl time.Duration) *agents.Directory {
	return agents.NewDirectory(svcclient.New("user", userURL, s.InternalToken, orderTimeout), ttl)
}

// Queue is the dialing queue and the do-not-call list over conn, with the lead service's orders,
// agents, catalogs and phone rules; now is their clock. The pacing metrics go to reg.
func Queue(conn *sqlx.DB, leads *lead.Service, dir *orders.Directory, staff *agents.Directory, cat *catalog.Store,
	now func() time.Time, reg prometheus.Registerer) (*dialer.Handler, *dnc.Handler) {
	d := dialer.NewHandler(dialer.NewService(dialer.NewStore(conn), dir, staff, cat, now).WithMetrics(dialer.NewMetrics(reg)))
	return d, dnc.NewHandler(dnc.NewStore(conn), dir, leads.Phones(), now)
}

// Relay publishes the lead events that the service's transactions write into the WAL, holding the
// database's slot, through pub; its metrics and the slot's (lag in bytes and seconds) are
// registered on reg. Both binaries run one, named name on the replication connection: one holds
// the slot and publishes, the others wait and take over when it stops or dies. The broker
// connection must declare the exchange (mq.EventExchange of event.Exchange).
func Relay(s Settings, conn *sqlx.DB, pub *mq.Publisher, name string, log *zap.Logger, reg prometheus.Registerer) (*walrelay.Relay, error) {
	slot, err := Slot(s)
	if err != nil {
		return nil, err
	}
	m := walrelay.NewMetrics(slot)
	reg.MustRegister(m, walrelay.NewSlotCollector(conn, slot))
	return &walrelay.Relay{DB: conn, URL: s.Database.URL, Name: name, Slot: slot, Publication: lead.EventsPublication,
		Prefix: lead.EventsPrefix, Publisher: pub, Log: log, Metrics: m,
		BatchSize: relayBatch, Parallel: relayParallel, Linger: relayLinger, MaxWait: relayMaxWait,
		GroupType: event.GroupType}, nil
}

// A bulk import or a worker's drain writes thousands of lead.created per second: the relay
// publishes them in batches of up to relayBatch (whole transactions), awaiting relayParallel
// confirms at once (the events of different leads need no order between them; one lead's keep
// theirs, and consumers dedupe by event id). A batch goes once the stream has been quiet for
// relayLinger or its first event waited relayMaxWait: both are part of a webhook's lag after its
// lead's commit. A batch's events of one type travel as one group message (event.GroupType): the
// broker stores one message for up to relayBatch leads.
const (
	relayBatch    = 500
	relayParallel = 64
	relayLinger   = 5 * time.Millisecond
	relayMaxWait  = 50 * time.Millisecond
)

// oneRoundTrip turns on the driver's binary_parameters mode: a statement with parameters is then
// sent as Parse, Bind and Execute at once (one round trip) instead of a Parse answered before the
// Bind (two). Only []byte parameters change encoding (they go as binary, which for bytea is the
// same bytes); the service passes no []byte to any other column type.
func oneRoundTrip(raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		return strings.TrimSpace(raw + " binary_parameters=yes"), nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("database url: %w", err)
	}
	q := u.Query()
	q.Set("binary_parameters", "yes")
	u.RawQuery = q.Encode()
	return u.String(), nil
}
