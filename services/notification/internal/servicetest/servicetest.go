// Package servicetest runs the notification service's real parts against a PostgreSQL database and
// a RabbitMQ vhost of the test package's own (made by pkg/dbtest and pkg/mqtest, dropped after),
// with the third parties the platform does not run, each a real server on a local port: an SMTP
// server and a messenger bot API. No user service runs here: the API and the worker are pointed at
// an address where nothing listens, so these tests cover what needs no recipients, and everything
// that does (private notifications, groups, channel preferences) is tested end to end with the
// real user service in gateway/e2e/notification_delivery_test.go. It is imported by tests only.
package servicetest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/email"
	"ccplatform/services/notification/internal/live"
	"ccplatform/services/notification/internal/messenger"
	"ccplatform/services/notification/internal/migrations"
	"ccplatform/services/notification/internal/recipient"
	"ccplatform/services/notification/internal/server"
	"ccplatform/services/notification/internal/worker"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token the test servers expect.
const Token = "test-internal-token"

// BotToken is the messenger bot's token in tests.
const BotToken = "123:test-bot"

// Env is the package's database and vhost and the bot API.
type Env struct {
	DB      *sqlx.DB
	AMQPURL string
	Bot     *Bot
	Log     *zap.Logger
}

// Main runs the test package with an Env of its own, given to setup before the tests run.
func Main(m *testing.M, label string, setup func(*Env)) {
	dbtest.MainSchema(m, label, migrations.Schema, 16, func(conn *sqlx.DB, _ string) int {
		return mqtest.WithVhost(label, func(amqpURL string) int {
			bot := NewBot()
			defer bot.Close()
			log := zap.NewNop()
			if os.Getenv("TEST_LOG") != "" {
				log, _ = zap.NewDevelopment()
			}
			setup(&Env{DB: conn, AMQPURL: amqpURL, Bot: bot, Log: log})
			return m.Run()
		})
	})
}

// Dial is a supervised connection to the vhost with the service's topology declared, closed when
// the test ends.
func (e *Env) Dial(t testing.TB, name string, topology ...mq.Topology) *mq.Conn {
	t.Helper()
	topology = append([]mq.Topology{mq.WorkQueue(command.Queue), live.ExchangeTopology}, topology...)
	conn := mq.Dial(e.AMQPURL, name, e.Log, topology...)
	t.Cleanup(conn.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := conn.Wait(ctx); err != nil {
		t.Fatalf("broker: %v", err)
	}
	return conn
}

// noUserService is a recipients directory at an address where nothing listens: the user service
// is not running in these tests, so asking it is Unavailable.
func noUserService(t testing.TB) *recipient.Directory {
	return recipient.NewDirectory(svcclient.New("user", "http://"+ClosedAddr(t), Token, time.Second))
}

// API is a running notification API.
type API struct {
	URL string
	Hub *live.Hub
}

// APIOptions change the API a test starts.
type APIOptions struct {
	// AMQPURL replaces the vhost (a closed port to see the broker down); ConfirmTimeout bounds the
	// wait for a confirm.
	AMQPURL        string
	ConfirmTimeout time.Duration
}

// StartAPI serves the real handler and its live listener until the test ends.
func (e *Env) StartAPI(t testing.TB, o APIOptions) *API {
	t.Helper()
	queue := live.OwnQueue()
	var conn *mq.Conn
	if o.AMQPURL != "" {
		conn = mq.Dial(o.AMQPURL, "notification-api-test", e.Log, mq.WorkQueue(command.Queue), live.QueueTopology(queue))
		t.Cleanup(conn.Close)
	} else {
		conn = e.Dial(t, "notification-api-test", live.QueueTopology(queue))
	}
	publisher := mq.NewPublisher(conn)
	t.Cleanup(publisher.Close)
	hub := live.NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = live.Listen(ctx, conn, queue, hub, e.Log) })
	users := noUserService(t)
	probes := ops.New("notification-api")
	probes.Database(e.DB.DB)
	probes.Broker(conn)
	srv := httptest.NewServer(server.New(server.Deps{API: ops.API{Ops: probes, Log: e.Log, InternalToken: Token},
		DB: e.DB, Users: users, Publisher: publisher,
		Idempotency: idempotency.New(e.DB, e.Log), Hub: hub, ConfirmTimeout: o.ConfirmTimeout, Heartbeat: time.Second,
	}))
	t.Cleanup(func() {
		hub.Close()
		srv.Close()
		cancel()
		wg.Wait()
	})
	return &API{URL: srv.URL, Hub: hub}
}

// WorkerOptions choose the channels and retries of a worker or a delivery loop.
type WorkerOptions struct {
	// SMTPAddr is the SMTP server (host:port); "" leaves e-mail not configured.
	SMTPAddr string
	// Messenger configures the messenger channel on the bot API (Env.Bot).
	Messenger bool
	Retry     delivery.RetryPolicy
}

// Senders are the channels o asks for: live on the vhost, e-mail through the SMTP server at
// o.SMTPAddr, the messenger on the bot API.
func (e *Env) Senders(t testing.TB, o WorkerOptions) map[delivery.Channel]delivery.Sender {
	t.Helper()
	conn := e.Dial(t, "notification-delivery-test")
	publisher := mq.NewPublisher(conn)
	t.Cleanup(publisher.Close)
	senders := map[delivery.Channel]delivery.Sender{delivery.Live: live.NewSender(publisher)}
	if o.SMTPAddr != "" {
		host, port := splitAddr(t, o.SMTPAddr)
		s, err := email.New(email.Config{Host: host, Port: port, From: MailFrom, TLS: "opportunistic"})
		if err != nil {
			t.Fatal(err)
		}
		senders[delivery.Email] = s
	}
	if o.Messenger {
		senders[delivery.Messenger] = messenger.New(messenger.Config{APIURL: e.Bot.URL(), BotToken: BotToken})
	}
	return senders
}

// MailFrom is the sender address of the service's e-mail in tests.
const MailFrom = "noreply@callcenter.local"

// NewLoop is a delivery loop over the package's database on the channels o asks for, with fast
// retries unless o.Retry says otherwise.
func (e *Env) NewLoop(t testing.TB, o WorkerOptions) *delivery.Loop {
	t.Helper()
	if o.Retry.MaxAttempts == 0 {
		o.Retry = delivery.RetryPolicy{Base: 100 * time.Millisecond, Max: 400 * time.Millisecond, MaxAttempts: 50}
	}
	return delivery.NewLoop(delivery.NewStore(e.DB), e.Senders(t, o), delivery.LoopConfig{
		Retry: o.Retry, Poll: 50 * time.Millisecond, SendTimeout: 2 * time.Second,
	}, e.Log)
}

// StartLoop runs a delivery loop until the test ends (StartWorker runs one of its own).
func (e *Env) StartLoop(t testing.TB, o WorkerOptions) *delivery.Loop {
	t.Helper()
	loop := e.NewLoop(t, o)
	e.run(t, loop.Run)
	return loop
}

// StartWorker runs a worker until the test ends. Only one runs at a time in a package: workers of
// the same vhost share the queue. No user service runs: any command that needs recipients is
// retried (the user service unavailable), never stored.
func (e *Env) StartWorker(t testing.TB, o WorkerOptions) {
	t.Helper()
	conn := e.Dial(t, "notification-worker-test")
	w := worker.New(worker.Deps{DB: e.DB, Conn: conn, Recipients: noUserService(t), Loop: e.NewLoop(t, o), Log: e.Log})
	e.run(t, func(ctx context.Context) { _ = w.Run(ctx) })
}

// run runs f until the test ends, then fails the deliveries left pending: they belong to this
// test's channels, and the next test's loop must not send them elsewhere.
func (e *Env) run(t testing.TB, f func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_, _ = e.DB.Exec(`UPDATE deliveries SET status = 'failed', last_error = 'test ended' WHERE status = 'pending'`)
	})
}

// Post sends a request to an API as the gateway would: internal token, verified user id, JSON.
func Post(t testing.TB, url, path string, userID int64, body string, headers ...string) (int, Envelope) {
	t.Helper()
	return Call(t, http.MethodPost, url+path, userID, body, headers...)
}

// ClosedAddr is a local address where nothing listens (for a moment ago something did).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// Publish puts a command body on the command queue, as the API does.
func (e *Env) Publish(t testing.TB, id string, body []byte) {
	t.Helper()
	conn := e.Dial(t, "test-publisher")
	p := mq.NewPublisher(conn)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Publish(ctx, "", command.Queue, mq.Message{ID: id, Type: command.MessageType, Body: body}); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// PurgeCommands empties the command queue, so that a test sees only its own commands.
func (e *Env) PurgeCommands(t testing.TB) {
	t.Helper()
	conn := e.Dial(t, "test-purge")
	ch, err := conn.Channel(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if _, err := ch.QueuePurge(command.Queue, false); err != nil {
		t.Fatal(err)
	}
}

// TakeCommand takes one message off the command queue within wait; ok is false if none came.
func (e *Env) TakeCommand(t testing.TB, queue string, wait time.Duration) ([]byte, bool) {
	t.Helper()
	conn := e.Dial(t, "test-take")
	ch, err := conn.Channel(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	deadline := time.Now().Add(wait)
	for {
		m, ok, err := ch.Get(queue, true)
		if err != nil {
			t.Fatalf("get %s: %v", queue, err)
		}
		if ok {
			return m.Body, true
		}
		if time.Now().After(deadline) {
			return nil, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
