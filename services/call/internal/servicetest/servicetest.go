// Package servicetest gives the call service's tests what they run against: a PostgreSQL database of
// the test package's own (pkg/dbtest, migrated, dropped after), a RabbitMQ vhost of their own
// (pkg/mqtest, deleted after), the real HTTP handler, and helpers to publish platform events and
// read what the service publishes. It is imported by tests only.
package servicetest

import (
	"net/http"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/webtest"
	"ccplatform/services/call/internal/migrations"
	"ccplatform/services/call/internal/server"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token the test handler expects.
const Token = "test-internal-token"

// Env is a migrated database, a vhost, and the handler serving the database.
type Env struct {
	DB      *sqlx.DB
	DBURL   string
	AMQPURL string
	// Client sends requests to the service's handler as the gateway would.
	webtest.Client
}

// Main runs the test package with an Env of its own, given to setup before the tests run.
func Main(m *testing.M, label string, setup func(*Env)) {
	dbtest.MainSchema(m, label, migrations.Schema, 16, func(conn *sqlx.DB, url string) int {
		return mqtest.WithVhost(label, func(amqpURL string) int {
			setup(&Env{DB: conn, DBURL: url, AMQPURL: amqpURL, Client: webtest.Client{Token: Token,
				Handler: server.New(server.Deps{API: ops.API{Ops: ops.New("test"), Log: zap.NewNop(), InternalToken: Token}, DB: conn})}})
			return m.Run()
		})
	})
}

// Response is a decoded envelope with its status and headers.
type Response = webtest.Response

// Get sends a GET as the gateway would; headers are name/value pairs that override the defaults,
// an empty value removing the header.
func (e *Env) Get(t testing.TB, path string, headers ...string) Response {
	t.Helper()
	return e.Do(t, http.MethodGet, path, nil, headers...)
}

// Eventually polls cond every 50 ms until it holds or the wait is over.
func Eventually(t testing.TB, wait time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %s", wait, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
