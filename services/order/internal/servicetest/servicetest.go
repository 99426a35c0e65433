// Package servicetest runs the service's real HTTP handler on a PostgreSQL database of the test
// package's own (made by pkg/dbtest, migrated, dropped after), and sends requests to it the way
// the gateway does. It is imported by tests only.
package servicetest

import (
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/webtest"
	"ccplatform/services/order/internal/migrations"
	"ccplatform/services/order/internal/server"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token the test handler expects.
const Token = "test-internal-token"

// UserID is the verified caller that requests carry unless a test says otherwise.
const UserID = "7"

// UnreachableUserURL is where the user service is said to be: nothing listens there, so every
// check against it fails as it does when that service is down.
const UnreachableUserURL = "http://127.0.0.1:1"

// Env is a migrated database and the handler serving it.
type Env struct {
	DB *sqlx.DB
	// Client sends requests to the service's handler as the gateway would (Do).
	webtest.Client
}

// Main runs the test package with an Env of its own, given to setup before the tests run.
func Main(m *testing.M, label string, setup func(*Env)) {
	dbtest.MainSchema(m, label, migrations.Schema, 16, func(conn *sqlx.DB, _ string) int {
		log := zap.NewNop()
		env := &Env{DB: conn}
		probes := ops.New("order")
		probes.Database(conn.DB)
		env.Client = webtest.Client{Token: Token, UserID: UserID, Handler: server.New(server.Deps{
			API:         ops.API{Ops: probes, Log: log, InternalToken: Token},
			DB:          conn,
			Users:       svcclient.New("user", UnreachableUserURL, Token, time.Second),
			Idempotency: idempotency.New(conn, log),
		})}
		setup(env)
		return m.Run()
	})
}

// Response is a decoded envelope with its status and headers.
type Response = webtest.Response
