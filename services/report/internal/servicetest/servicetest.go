// Package servicetest runs the report service's real parts against a PostgreSQL database and a
// RabbitMQ vhost of the test package's own (pkg/dbtest, pkg/mqtest), with the API handler served in
// process. The order and lead services are answered by Peers, an HTTP server giving their internal
// answers (which orders a caller sees, the lead-status catalog) as the tests set them; their own
// rules are tested in those services and end to end. It is imported by tests only.
package servicetest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/webtest"
	"ccplatform/services/report/internal/ingest"
	"ccplatform/services/report/internal/live"
	"ccplatform/services/report/internal/migrations"
	"ccplatform/services/report/internal/server"
	"ccplatform/services/report/internal/statuses"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token of the handler under test.
const Token = "test-internal-token"

// Catalog is the lead service's status catalog as its migration seeds it (4, qualified, is the
// success status).
var Catalog = []statuses.Status{{ID: 1, Code: "new", Category: "in_progress"}, {ID: 2, Code: "callback", Category: "in_progress"}, {ID: 3, Code: "no_answer", Category: "in_progress"},
	{ID: 4, Code: "qualified", Category: "success"}, {ID: 5, Code: "rejected", Category: "failure"}, {ID: 6, Code: "duplicate", Category: "failure"}, {ID: 7, Code: "wrong_number", Category: "failure"},
	{ID: 8, Code: "busy", Category: "in_progress"}, {ID: 9, Code: "not_interested", Category: "failure"}}

// Now is the handler's clock: an agent's current state lasts until then.
var Now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// The live stream's tick and heartbeat in the tests: short, so that a test waits little.
const (
	LiveTick      = 50 * time.Millisecond
	LiveHeartbeat = 500 * time.Millisecond
)

// Env is a migrated database, a broker vhost, the peers and the API handler.
type Env struct {
	DB      *sqlx.DB
	AMQPURL string
	Peers   *Peers
	// Hub is the live stream's, taking its snapshots while the package's tests run.
	Hub *live.Hub
	// Client calls the API as the gateway would (admin unless told otherwise).
	webtest.Client
}

// Peers answers as the order service (GET /internal/order-scope: the orders of each user set by
// SetOrders) and the lead service (GET /internal/lead-statuses: Catalog; POST
// /internal/dialer/live: the orders set by SetDialing among those asked).
type Peers struct {
	*httptest.Server
	mu      sync.Mutex
	orders  map[int64][]int64
	dialing map[int64]Dialed
	asked   [][]int64
}

// Dialed is the lead service's live answer for one order (POST /internal/dialer/live).
type Dialed struct {
	OrderID int64        `json:"orderId"`
	Agents  []live.Agent `json:"agents"`
	live.Dialing
}

// SetDialing makes the lead service answer d for its order.
func (p *Peers) SetDialing(d Dialed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialing[d.OrderID] = d
}

// Asked are the order ids of every live question so far.
func (p *Peers) Asked() [][]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]int64{}, p.asked...)
}

// SetOrders makes user see exactly ids.
func (p *Peers) SetOrders(user int64, ids ...int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.orders[user] = ids
}

func (p *Peers) serve(w http.ResponseWriter, r *http.Request) {
	var data any
	switch r.URL.Path {
	case "/internal/order-scope":
		user, _ := strconv.ParseInt(r.URL.Query().Get("userId"), 10, 64)
		p.mu.Lock()
		ids := append([]int64{}, p.orders[user]...)
		p.mu.Unlock()
		data = visibleorders.Visible{OrderIDs: ids, HiddenContacts: []int64{}}
	case "/internal/lead-statuses":
		data = map[string]any{"list": Catalog}
	case "/internal/dialer/live":
		var in struct {
			OrderIDs []int64 `json:"orderIds"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		list := []Dialed{}
		p.mu.Lock()
		p.asked = append(p.asked, in.OrderIDs)
		for _, id := range in.OrderIDs {
			if d, ok := p.dialing[id]; ok {
				list = append(list, d)
			}
		}
		p.mu.Unlock()
		data = map[string]any{"list": list}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "message": "", "data": data})
}

// Main runs the test package with an Env of its own, given to ready before the tests run.
func Main(m *testing.M, label string, ready func(*Env)) {
	dbtest.MainSchema(m, label, migrations.Schema, 16, func(conn *sqlx.DB, _ string) int {
		return mqtest.WithVhost(label, func(amqpURL string) int {
			peers := &Peers{orders: map[int64][]int64{}, dialing: map[int64]Dialed{}}
			peers.Server = httptest.NewServer(http.HandlerFunc(peers.serve))
			defer peers.Close()
			orders := svcclient.New("order", peers.URL, Token, 3*time.Second)
			leads := svcclient.New("lead", peers.URL, Token, 3*time.Second)
			hub := live.NewHub(live.NewSource(conn, leads, time.Now).Take, LiveTick, zap.NewNop())
			ctx, stop := context.WithCancel(context.Background())
			ran := make(chan struct{})
			go func() { defer close(ran); _ = hub.Run(ctx) }()
			defer func() { stop(); <-ran }()
			env := &Env{DB: conn, AMQPURL: amqpURL, Peers: peers, Hub: hub}
			env.Client = webtest.Client{Token: Token, UserID: "1", Handler: server.New(server.Deps{
				API: ops.API{Ops: ops.New("report"), Log: zap.NewNop(), InternalToken: Token}, DB: conn,
				Scopes: visibleorders.New(orders, visibleorders.DefaultTTL), Catalog: statuses.New(leads), Now: func() time.Time { return Now },
				Live: hub, Heartbeat: LiveHeartbeat})}
			ready(env)
			return m.Run()
		})
	})
}

// As is the API client acting as user of group.
func (e *Env) As(user, group string) webtest.Client { return e.Client.As(user, group) }

// Consume runs the report consumer on the test's vhost until the test ends, and returns a
// connection of the test's own to publish with.
func (e *Env) Consume(t *testing.T) *Publisher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn := mq.Dial(e.AMQPURL, "report-test", zap.NewNop(), ingest.Topology())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = conn.Consume(ctx, mq.ConsumerConfig{Queue: ingest.Queue, BatchSize: 50, BatchWait: 5 * time.Millisecond, Workers: 2,
			MaxAttempts: 5, Tag: "report-test"}, ingest.NewConsumer(e.DB, zap.NewNop()).Handle)
	}()
	pubConn := mq.Dial(e.AMQPURL, "report-test-publisher", zap.NewNop(), ingest.Topology())
	wait, stop := context.WithTimeout(context.Background(), 15*time.Second)
	defer stop()
	if err := pubConn.Wait(wait); err != nil {
		t.Fatalf("broker: %v", err)
	}
	p := &Publisher{pub: mq.NewPublisher(pubConn)}
	t.Cleanup(func() {
		p.pub.Close()
		pubConn.Close()
		cancel()
		<-done
		conn.Close()
	})
	return p
}

// Publisher publishes on the events exchange with confirms.
type Publisher struct{ pub *mq.Publisher }

// Publish sends one message of type typ with routing key key.
func (p *Publisher) Publish(t testing.TB, key, typ string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := p.pub.Publish(ctx, event.Exchange, key, mq.Message{ID: uuid.NewString(), Type: typ, Body: body}); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// Eventually polls cond every 20 ms until it holds or wait is over.
func Eventually(t testing.TB, wait time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", wait, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CallFinished is a call.finished body as call-ingest writes it (docs/events.md).
func CallFinished(eventID string, orderID, leadID, userID int64, status string, started time.Time, talk int64) []byte {
	b, _ := json.Marshal(map[string]any{"eventId": eventID, "type": "call.finished", "occurredAt": started.Add(time.Duration(talk) * time.Second).UTC().Format(time.RFC3339),
		"callId": 1, "leadId": leadID, "orderId": orderID, "userId": userID, "statusId": 1, "statusCode": status,
		"endedAt": started.UTC().Format(time.RFC3339),
		"data":    map[string]any{"id": 1, "createdAt": started.UTC().Format(time.RFC3339), "talkTimeDurationSeconds": talk, "leadId": leadID, "orderId": orderID}})
	return b
}

// AgentState is agent.state.changed as the user service announces it (pauseReason and orderId may
// be empty: null).
func AgentState(eventID string, userID int64, state, reason string, orderID int64, at time.Time) []byte {
	data := map[string]any{"userId": userID, "state": state, "pauseReason": nil, "orderId": nil, "at": at.UTC().Format(time.RFC3339Nano),
		"previousState": nil, "previousAt": nil}
	if reason != "" {
		data["pauseReason"] = reason
	}
	if orderID > 0 {
		data["orderId"] = orderID
	}
	raw, _ := json.Marshal(data)
	b, _ := json.Marshal(event.Event{ID: eventID, Type: "agent.state.changed", OccurredAt: at.UTC().Format(time.RFC3339), Data: raw})
	return b
}

// LeadEvent is a lead event (lead.created, lead.status_changed) of a lead of orderID entering
// statusID at at.
func LeadEvent(eventID, typ string, orderID, statusID int64, at time.Time) event.Event {
	data, _ := json.Marshal(map[string]any{"id": 1, "statusId": statusID, "orderId": orderID})
	return event.Event{ID: eventID, Type: typ, OccurredAt: at.UTC().Format(time.RFC3339), OrderID: orderID, Data: data}
}
