// Package servicetest runs lead-api's real HTTP handler on a PostgreSQL database of the test
// package's own (made by pkg/dbtest, migrated, dropped after) and a RabbitMQ vhost of its own
// (pkg/mqtest), and sends requests to it the way the gateway does. The order service is not
// started: tests that need real order checks are end-to-end tests (gateway/e2e); here orders are
// put into the order cache with Env.Order. It is imported by tests only.
package servicetest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/webtest"
	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/imports"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/server"
	"ccplatform/services/lead/internal/upload"
	"ccplatform/services/lead/internal/wiring"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token the test handler expects.
const Token = "test-internal-token"

// UserID is the verified caller that requests carry unless a test says otherwise.
const UserID = "7"

// UnreachableOrderURL is where the order service is said to be: nothing listens there.
const UnreachableOrderURL = "http://127.0.0.1:1"

// Env is a migrated database, a broker vhost and the handler serving them.
type Env struct {
	DB       *sqlx.DB
	DBURL    string
	AMQPURL  string
	Broker   *mq.Conn
	Settings wiring.Settings
	Leads    *lead.Service
	Orders   *orders.Directory
	// Agents is the paced lease's agent directory: the user service is not started, so tests put
	// their agents into it (Remember).
	Agents  *agents.Directory
	Catalog *catalog.Store
	JobIDs  *asynccreate.IDs
	// clock is the dialing queue's time when set (SetNow), else time.Now.
	clock atomic.Pointer[time.Time]
	// Client sends requests to the service's handler as the gateway would (Do).
	webtest.Client
}

// Main runs the test package with an Env of its own, given to setup before the tests run.
func Main(m *testing.M, label string, ready func(*Env)) {
	dbtest.Main(m, label, func(dbURL string) int {
		return mqtest.WithVhost(label, func(amqpURL string) int { return run(m, label, dbURL, amqpURL, ready) })
	})
}

// run builds the Env on the package's database and vhost and runs the tests.
func run(m *testing.M, label, dbURL, amqpURL string, ready func(*Env)) int {
	ctx := context.Background()
	s := wiring.Settings{OrderURL: UnreachableOrderURL, OrderCacheTTL: time.Hour}
	s.InternalToken, s.Database.URL, s.MaxConns, s.Broker.URL = Token, dbURL, 16, amqpURL
	conn, err := wiring.OpenDB(ctx, s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "servicetest:", err)
		return 1
	}
	defer conn.Close()
	log := zap.NewNop()
	leads, dir, cat := wiring.Leads(s, conn)
	broker := mq.Dial(amqpURL, label, log, mq.WorkQueue(asynccreate.Queue))
	defer broker.Close()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := broker.Wait(wctx); err != nil {
		fmt.Fprintln(os.Stderr, "servicetest:", err)
		return 1
	}
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	ids := asynccreate.NewIDs("test-job-secret")
	env := &Env{DB: conn, DBURL: dbURL, AMQPURL: amqpURL, Broker: broker, Settings: s, Leads: leads,
		Orders: dir, Catalog: cat, JobIDs: ids}
	probes := ops.New("lead-api")
	probes.Database(conn.DB)
	probes.Broker(broker)
	env.Agents = agents.NewDirectory(nil, time.Hour)
	queue, dncList := wiring.Queue(conn, leads, dir, env.Agents, cat, env.Now, probes.Registry)
	env.Client = webtest.Client{Token: Token, UserID: UserID, Handler: server.New(server.Deps{
		API: ops.API{Ops: probes, Log: log, InternalToken: Token}, DB: conn, Leads: leads, Catalog: cat,
		Accepter: asynccreate.NewAccepter(pub, ids, 5*time.Second), JobIDs: ids,
		Idempotency: idempotency.New(conn, log), Dialer: queue, DNC: dncList,
		Imports: imports.NewHandler(imports.NewStore(conn), asynccreate.NewIDs("test-import-secret"), cat.ByIDs, upload.NewGate(UploadLimits), log),
	})}
	ready(env)
	return m.Run()
}

// UploadLimits are the import uploads the Env's handler admits: lead-api's defaults.
var UploadLimits = upload.Limits{PerKey: 2, Total: 8, Stall: 10 * time.Second, Whole: 5 * time.Minute}

// Now is the dialing queue's clock: the instant SetNow set, else time.Now.
func (e *Env) Now() time.Time {
	if t := e.clock.Load(); t != nil {
		return *t
	}
	return time.Now()
}

// SetNow fixes the dialing queue's clock at t (the zero time: time.Now again).
func (e *Env) SetNow(t time.Time) {
	if t.IsZero() {
		e.clock.Store(nil)
		return
	}
	e.clock.Store(&t)
}

// Order puts an order into the order cache, as if the order service had answered with it.
func (e *Env) Order(id int64, code string) {
	e.Orders.Remember(orders.Order{ID: id, Code: code})
}

// Response is a decoded envelope with its status and headers.
type Response = webtest.Response
