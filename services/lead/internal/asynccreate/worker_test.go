package asynccreate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/migrations"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/servicetest"
	"ccplatform/services/lead/internal/wiring"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "lead_worker", func(e *servicetest.Env) { env = e })
}

const orderID, orderCode = 41, "order-41"

func message(t *testing.T, version string, body map[string]any) (string, []byte) {
	t.Helper()
	id := env.JobIDs.New(9).String()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	uid := int64(9)
	b, err := json.Marshal(asynccreate.Message{JobID: id, Version: version, CreateMethod: "api_" + version + "_async", Body: raw, CallerUserID: &uid})
	require.NoError(t, err)
	return id, b
}

func v2(phone string) map[string]any {
	return map[string]any{"leadType": "straight", "phone": phone, "orderId": orderID, "orderCode": orderCode}
}

func deliveries(bodies ...[]byte) []mq.Delivery {
	out := make([]mq.Delivery, len(bodies))
	for i, b := range bodies {
		out[i] = mq.Delivery{Body: b}
	}
	return out
}

func outcomes(results []mq.Result) []mq.Outcome {
	out := make([]mq.Outcome, len(results))
	for i, r := range results {
		out[i] = r.Outcome
	}
	return out
}

func leadsOfJob(t *testing.T, jobID string) []lead.Lead {
	t.Helper()
	var ids []int64
	require.NoError(t, env.DB.Select(&ids, `SELECT id FROM leads WHERE job_id = $1`, jobID))
	var out []lead.Lead
	for _, id := range ids {
		l, err := env.Leads.Get(context.Background(), id)
		require.NoError(t, err)
		out = append(out, l)
	}
	return out
}

func outcome(t *testing.T, jobID string) asynccreate.Outcome {
	t.Helper()
	var o asynccreate.Outcome
	require.NoError(t, env.DB.Get(&o, `SELECT job_id, status, lead_id, reason FROM lead_jobs WHERE job_id = $1`, jobID))
	return o
}

func TestBatchWithDuplicatesMakesOneLeadPerJob(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	a, bodyA := message(t, "v2", v2("+79161110001"))
	b, bodyB := message(t, "v2", v2("79161110001"))
	c, bodyC := message(t, "v1", map[string]any{"lead_type": "selection", "client_phone": "79161110002", "order_id": orderID,
		"order_code": orderCode, "messengerId": 1, "socialNetworkId": "2", "socialLogin": "s", "client_name": "V1"})
	results := w.Handle(context.Background(), deliveries(bodyA, bodyB, bodyA, bodyC, bodyA))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack, mq.Ack, mq.Ack, mq.Ack}, outcomes(results))

	la, lb, lc := leadsOfJob(t, a), leadsOfJob(t, b), leadsOfJob(t, c)
	require.Len(t, la, 1)
	require.Len(t, lb, 1)
	require.Len(t, lc, 1)
	assert.Equal(t, lead.MethodAPIv2Async, la[0].CreateMethod)
	assert.Equal(t, int64(9), *la[0].CreatedBy)
	assert.False(t, la[0].IsSecondary)
	assert.True(t, lb[0].IsSecondary, "the same phone later in the batch is a repeat")
	assert.Equal(t, la[0].ID, *lb[0].PreviousLeadID)
	assert.Equal(t, lb[0].ID, *la[0].NextLeadID)
	assert.Equal(t, "V1", *lc[0].Name)
	assert.Equal(t, lead.MethodAPIv1Async, lc[0].CreateMethod)
	assert.Equal(t, "selection", lc[0].LeadType)
	for _, id := range []string{a, b, c} {
		o := outcome(t, id)
		assert.Equal(t, asynccreate.StatusDone, o.Status)
		assert.NotNil(t, o.LeadID)
	}
}

func TestRedeliveredJobCreatesNothingTwice(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	id, body := message(t, "v2", v2("+79161110010"))
	for range 3 {
		assert.Equal(t, []mq.Outcome{mq.Ack}, outcomes(w.Handle(context.Background(), deliveries(body))))
	}
	leads := leadsOfJob(t, id)
	require.Len(t, leads, 1)
	assert.Equal(t, leads[0].ID, *outcome(t, id).LeadID)
	assert.False(t, leads[0].IsSecondary, "a redelivery is not a repeat of itself")
}

func TestJobsThatCanNeverSucceedAreFailedAndAcked(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	final := v2("+79161110020")
	final["statusId"] = 4
	a, bodyA := message(t, "v2", final)
	b, bodyB := message(t, "v1", map[string]any{"lead_type": "straight", "client_phone": "12", "order_id": orderID, "order_code": orderCode})
	wrongCode := v2("+79161110021")
	wrongCode["orderCode"] = "not-" + orderCode
	c, bodyC := message(t, "v2", wrongCode)
	ok, bodyOK := message(t, "v2", v2("+79161110022"))
	results := w.Handle(context.Background(), deliveries(bodyA, bodyB, bodyC, bodyOK))
	// The code check asks the order service again before refusing a cached order's code; that
	// service is down in these tests, so that job waits (a wrong code failing its job is an
	// end-to-end test).
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack, mq.Retry, mq.Ack}, outcomes(results))
	assert.Empty(t, leadsOfJob(t, c))

	o := outcome(t, a)
	assert.Equal(t, asynccreate.StatusFailed, o.Status)
	assert.Nil(t, o.LeadID)
	assert.Contains(t, *o.Reason, "statusId: status 4 (qualified) is not allowed on create")
	o = outcome(t, b)
	assert.Equal(t, asynccreate.StatusFailed, o.Status)
	assert.Contains(t, *o.Reason, "client_phone: must be a phone number", "v1 jobs fail in v1 names")
	assert.Contains(t, *o.Reason, "messengerId: is required")
	assert.NotContains(t, *o.Reason, "orderId")
	assert.Empty(t, leadsOfJob(t, a))
	assert.Empty(t, leadsOfJob(t, b))
	assert.Len(t, leadsOfJob(t, ok), 1)
}

func TestOrderServiceDownRetriesOnlyItsJobs(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	unknown := v2("+79161110030")
	unknown["orderId"] = 987654 // not cached, and the order service is unreachable in these tests
	_, bodyU := message(t, "v2", unknown)
	ok, bodyOK := message(t, "v2", v2("+79161110031"))
	results := w.Handle(context.Background(), deliveries(bodyU, bodyOK))
	assert.Equal(t, []mq.Outcome{mq.Retry, mq.Ack}, outcomes(results))
	assert.Len(t, leadsOfJob(t, ok), 1)
}

func TestUndecodableJobsAreDeadLettered(t *testing.T) {
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	results := w.Handle(context.Background(), deliveries([]byte(`{not json`), []byte(`{"jobId":"x","version":"v2"}`), []byte(`{"jobId":"`+env.JobIDs.New(9).String()+`","version":"v9","body":{}}`)))
	assert.Equal(t, []mq.Outcome{mq.DeadLetter, mq.DeadLetter, mq.DeadLetter}, outcomes(results))
	for _, r := range results {
		assert.NotEmpty(t, r.Reason)
	}

	// Through the broker: the message lands in lead.jobs.dead with its reason.
	conn := mq.Dial(env.AMQPURL, "worker-test-dead", zap.NewNop(), mq.WorkQueue(asynccreate.Queue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, pub.Publish(ctx, "", asynccreate.Queue, mq.Message{ID: "garbage-1", Type: asynccreate.MessageType, Body: []byte("garbage")}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = conn.Consume(ctx, mq.ConsumerConfig{Queue: asynccreate.Queue, Workers: 1, Tag: "worker-test"}, w.Handle)
	}()
	require.Eventually(t, func() bool {
		_, n, err := conn.QueueConsumers(ctx, asynccreate.Queue+mq.DeadLetterSuffix)
		return err == nil && n == 1
	}, 10*time.Second, 50*time.Millisecond)
	cancel()
	<-done
	ch, err := conn.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	d, ok, err := ch.Get(asynccreate.Queue+mq.DeadLetterSuffix, true)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "garbage-1", d.MessageId)
	assert.Contains(t, d.Headers["x-dead-letter-reason"], "undecodable")
}

// tcpProxy stands between the worker and PostgreSQL, so a test can take the database away and
// give it back without touching the server.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	up     bool
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &tcpProxy{ln: ln, target: target, up: true}
	t.Cleanup(func() { _ = ln.Close(); p.setUp(false) })
	go p.serve()
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if !p.up {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
		go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
	}
}

func (p *tcpProxy) setUp(up bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up = up
	if !up {
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.conns = nil
	}
}

func TestDatabaseOutageIsRetriedUntilItHeals(t *testing.T) {
	u, err := url.Parse(env.DBURL)
	require.NoError(t, err)
	proxy := newProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := db.Open(ctx, u.String(), migrations.Schema.Name, 4)
	require.NoError(t, err)
	defer conn.Close()
	settings := env.Settings
	leads, dir, _ := wiring.Leads(settings, conn)
	dir.Remember(orderCached())
	w := asynccreate.NewWorker(conn, leads, zap.NewNop(), 200)

	// Directly: a batch while the database is away is retried, not failed.
	proxy.setUp(false)
	id, body := message(t, "v2", v2("+79161110040"))
	results := w.Handle(ctx, deliveries(body))
	assert.Equal(t, []mq.Outcome{mq.Retry}, outcomes(results))

	// Through the broker: the consumer keeps retrying and stores the lead once the database is back.
	broker := mq.Dial(env.AMQPURL, "worker-test-outage", zap.NewNop(), mq.WorkQueue(asynccreate.Queue))
	defer broker.Close()
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	require.NoError(t, pub.Publish(ctx, "", asynccreate.Queue, mq.Message{ID: id, Type: asynccreate.MessageType, Body: body}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = broker.Consume(ctx, mq.ConsumerConfig{Queue: asynccreate.Queue, Workers: 2, BatchSize: 50, Tag: "worker-test"}, w.Handle)
	}()
	time.Sleep(1500 * time.Millisecond)
	assert.Empty(t, leadsOfJob(t, id), "nothing stored while the database is away")
	proxy.setUp(true)
	require.Eventually(t, func() bool { return len(leadsOfJob(t, id)) == 1 }, 20*time.Second, 100*time.Millisecond)
	assert.Equal(t, asynccreate.StatusDone, outcome(t, id).Status)
	require.Eventually(t, func() bool {
		_, n, err := broker.QueueConsumers(ctx, asynccreate.Queue)
		return err == nil && n == 0
	}, 10*time.Second, 100*time.Millisecond, "the job was acked")
	cancel()
	<-done
}

func orderCached() orders.Order { return orders.Order{ID: orderID, Code: orderCode} }

// Earlier versions of lead-api published jobs in groups (type lead.create.group, a JSON array of
// jobs); the worker reads one job a message, so such a message is dead-lettered as it came, and
// none of its jobs is stored.
func TestJobGroupsAreDeadLetteredAsAnUnknownMessageType(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	a, bodyA := message(t, "v2", v2("+79161110050"))
	b, bodyB := message(t, "v2", v2("+79161110051"))
	single, bodySingle := message(t, "v2", v2("+79161110052"))
	grouped := mq.Delivery{Type: "lead.create.group", Body: mq.JoinGroup([][]byte{bodyA, bodyB})}
	results := w.Handle(context.Background(), []mq.Delivery{grouped, {Type: asynccreate.MessageType, Body: bodySingle}})
	require.Equal(t, []mq.Outcome{mq.DeadLetter, mq.Ack}, outcomes(results))
	assert.Equal(t, `unknown message type "lead.create.group"`, results[0].Reason)
	assert.Nil(t, results[0].Keep, "the message is dead-lettered as it came")
	assert.Empty(t, leadsOfJob(t, a))
	assert.Empty(t, leadsOfJob(t, b))
	assert.Len(t, leadsOfJob(t, single), 1)

	// Its dead-lettering records nothing: the body names no one asynccreate.
	require.NoError(t, w.DeadLettered(context.Background(), grouped, grouped.Body, results[0].Reason))
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM lead_jobs WHERE job_id = ANY($1)`, pq.Array([]string{a, b})))
	assert.Zero(t, n)
}

func TestJobsAreWrittenInTransactionsOfBoundedSize(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 3)
	var ids []string
	var bodies [][]byte
	for j := range 8 {
		id, body := message(t, "v2", v2(fmt.Sprintf("+7916111006%d", j)))
		ids = append(ids, id)
		bodies = append(bodies, body)
	}
	results := w.Handle(context.Background(), deliveries(bodies...))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack, mq.Ack, mq.Ack, mq.Ack, mq.Ack, mq.Ack, mq.Ack}, outcomes(results))
	for _, id := range ids {
		require.Len(t, leadsOfJob(t, id), 1, id)
	}
	// created_at is the writing transaction's start: eight jobs, three per transaction.
	var txs int
	require.NoError(t, env.DB.Get(&txs, `SELECT count(DISTINCT created_at) FROM leads WHERE job_id = ANY($1)`, pq.Array(ids)))
	assert.Equal(t, 3, txs)
	assert.Greater(t, lead.MaxInsertBatch, 1000, "a default batch fits in one INSERT")
	_, err := lead.InsertBatch(context.Background(), nil, make([]lead.Lead, lead.MaxInsertBatch+1))
	assert.ErrorContains(t, err, "at most", "more leads than one statement can bind are refused before any SQL")
}

// A job the database refuses every time fails MaxAttempts times and is dead-lettered; the
// dead-lettering records it failed, so its status never stays queued. The other jobs are stored as
// usual.
func TestAJobTheDatabaseRefusesEndsFailedNeverQueued(t *testing.T) {
	env.Order(orderID, orderCode)
	// Something the checks accept and the database refuses, standing for any such fault.
	_, err := env.DB.Exec(`ALTER TABLE leads ADD CONSTRAINT test_refused_name CHECK (name IS DISTINCT FROM 'refused by the database')`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = env.DB.Exec(`ALTER TABLE leads DROP CONSTRAINT test_refused_name`) })
	refused := func(phone string) map[string]any {
		b := v2(phone)
		b["name"] = "refused by the database"
		return b
	}
	single, bodySingle := message(t, "v2", refused("+79161110060"))
	good, bodyGood := message(t, "v2", v2("+79161110061"))
	bad, bodyBad := message(t, "v2", refused("+79161110062"))

	conn := mq.Dial(env.AMQPURL, "worker-test-refused", zap.NewNop(), mq.WorkQueue(asynccreate.Queue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, pub.Publish(ctx, "", asynccreate.Queue, mq.Message{ID: single, Type: asynccreate.MessageType, Body: bodySingle}))
	require.NoError(t, pub.Publish(ctx, "", asynccreate.Queue, mq.Message{ID: good, Type: asynccreate.MessageType, Body: bodyGood}))
	require.NoError(t, pub.Publish(ctx, "", asynccreate.Queue, mq.Message{ID: bad, Type: asynccreate.MessageType, Body: bodyBad}))

	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = conn.Consume(ctx, mq.ConsumerConfig{Queue: asynccreate.Queue, Workers: 1, MaxAttempts: 2, Tag: "worker-test-refused",
			OnDeadLetter: w.DeadLettered}, w.Handle)
	}()
	finished := func(id string) bool {
		var n int
		require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM lead_jobs WHERE job_id = $1`, id))
		return n == 1
	}
	require.Eventually(t, func() bool { return finished(single) && finished(bad) && finished(good) }, 20*time.Second, 50*time.Millisecond)
	cancel()
	<-done

	for _, id := range []string{single, bad} {
		o := outcome(t, id)
		assert.Equal(t, asynccreate.StatusFailed, o.Status, id)
		require.NotNil(t, o.Reason)
		// The database's words are for the log and the dead-lettered copy, not for the caller.
		assert.Equal(t, "not processed: the service could not store it; the reason is in the service log under this job id", *o.Reason, id)
		assert.Empty(t, leadsOfJob(t, id))
	}
	assert.Equal(t, asynccreate.StatusDone, outcome(t, good).Status)
	require.Len(t, leadsOfJob(t, good), 1)

	// The copies of the refused jobs are kept for operators, as they came.
	ch, err := conn.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	copies := map[string]string{}
	for {
		d, ok, err := ch.Get(asynccreate.Queue+mq.DeadLetterSuffix, true)
		require.NoError(t, err)
		if !ok {
			break
		}
		copies[d.MessageId] = string(d.Body)
	}
	assert.Equal(t, string(bodySingle), copies[single])
	assert.Equal(t, string(bodyBad), copies[bad])
}
