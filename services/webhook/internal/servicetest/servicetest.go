// Package servicetest runs the webhook service's real parts against a PostgreSQL database and a
// RabbitMQ vhost of the test package's own (pkg/dbtest, pkg/mqtest), with the API handler served in
// process and receivers as real HTTP servers on local ports. The clock is the test's: it moves
// only when a test moves it, so retry schedules are checked to the second. It is imported by tests
// only.
package servicetest

import (
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/webtest"
	"ccplatform/services/webhook/internal/delivery"
	"ccplatform/services/webhook/internal/migrations"
	"ccplatform/services/webhook/internal/server"
	"ccplatform/services/webhook/internal/urlguard"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token of the handler under test.
const Token = "test-internal-token"

// Env is a migrated database, a broker vhost, a clock, and the API handler.
type Env struct {
	DB      *sqlx.DB
	AMQPURL string
	Clock   *Clock
	// Guard is the tests' policy: http and local receivers allowed.
	Guard urlguard.Policy
	// Client calls the API as the gateway would (admin unless told otherwise).
	webtest.Client
}

// Main runs the test package with an Env of its own, given to ready before the tests run.
func Main(m *testing.M, label string, ready func(*Env)) {
	dbtest.MainSchema(m, label, migrations.Schema, 32, func(conn *sqlx.DB, _ string) int {
		return mqtest.WithVhost(label, func(amqpURL string) int {
			env := &Env{DB: conn, AMQPURL: amqpURL, Clock: NewClock(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)),
				Guard: urlguard.Policy{AllowHTTP: true, AllowPrivate: true}}
			env.Client = webtest.Client{Token: Token, UserID: "1", Handler: server.New(server.Deps{
				API: ops.API{Ops: ops.New("webhook-api"), Log: zap.NewNop(), InternalToken: Token}, DB: conn,
				Idempotency: idempotency.New(conn, zap.NewNop()), Guard: env.Guard, Now: env.Clock.Now,
			})}
			ready(env)
			return m.Run()
		})
	})
}

// As is the API client acting as user of group.
func (e *Env) As(user, group string) webtest.Client { return e.Client.As(user, group) }

// Dispatcher is a dispatcher on the test's database and clock; jitter is fixed at the middle of
// its range (no jitter), so the schedule is exact.
func (e *Env) Dispatcher(t *testing.T, cfg delivery.Config, notify delivery.Notify) *delivery.Dispatcher {
	sender := delivery.NewSender(e.Guard)
	t.Cleanup(sender.Close)
	if notify == nil {
		notify = delivery.NotifyOwner
	}
	return delivery.NewDispatcher(delivery.NewStore(e.DB), sender, notify, cfg, zap.NewNop(), e.Clock.Now,
		func() float64 { return 0.5 }, nil)
}

// Clock is a settable clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }
