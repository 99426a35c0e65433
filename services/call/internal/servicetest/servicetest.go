// Package servicetest gives the call service's tests what they run against: a PostgreSQL database of
// the test package's own (pkg/dbtest, migrated, dropped after), a RabbitMQ vhost of their own
// (pkg/mqtest, deleted after), the real HTTP handler, and helpers to publish platform events and
// read what the service publishes. It is imported by tests only.
package servicetest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"ccplatform/pkg/ops"
	"ccplatform/pkg/webtest"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mqtest"
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
	dbtest.Main(m, label, func(url string) int {
		amqpURL, dropVhost, err := mqtest.CreateVhost(label)
		if err != nil {
			fmt.Fprintln(os.Stderr, "servicetest:", err)
			return 1
		}
		defer func() {
			if err := dropVhost(); err != nil {
				fmt.Fprintln(os.Stderr, "servicetest: drop vhost:", err)
			}
		}()
		ctx := context.Background()
		conn, err := migrations.Schema.Open(ctx, url, 16)
		if err != nil {
			fmt.Fprintln(os.Stderr, "servicetest:", err)
			return 1
		}
		defer conn.Close()
		setup(&Env{DB: conn, DBURL: url, AMQPURL: amqpURL, Client: webtest.Client{Token: Token,
			Handler: server.New(server.Deps{Ops: ops.New("test"), DB: conn, Log: zap.NewNop(), InternalToken: Token})}})
		return m.Run()
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
