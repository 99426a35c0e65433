package ingest_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"
	"ccplatform/services/call/internal/ingest"
	"ccplatform/services/call/internal/migrations"
	"ccplatform/services/call/internal/servicetest"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "call_ingest", func(e *servicetest.Env) { env = e })
}

var base = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// running is a consumer of a queue of the test's own, as call-ingest runs it.
type running struct {
	queue string
	name  string
	conn  *mq.Conn
}

func startConsumer(t *testing.T, store *sqlx.DB) running {
	t.Helper()
	suffix := uuid.NewString()[:8]
	r := running{queue: "telephony.calls.test-" + suffix, name: "call-ingest-test-" + suffix}
	log := zap.NewNop()
	r.conn = mq.Dial(env.AMQPURL, r.name, log, mq.WorkQueue(r.queue), mq.EventExchange(ingest.Exchange))
	pub := mq.NewPublisher(r.conn)
	consumer := ingest.NewConsumer(ingest.NewStore(store), pub, log)
	ctx, cancel := context.WithCancel(context.Background())
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	require.NoError(t, r.conn.Wait(wctx))
	done := make(chan error, 1)
	go func() {
		done <- r.conn.Consume(ctx, mq.ConsumerConfig{Queue: r.queue, BatchSize: 50, BatchWait: 20 * time.Millisecond,
			Workers: 2, MaxAttempts: 3, Tag: r.name}, consumer.Handle)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		pub.Close()
		r.conn.Close()
	})
	return r
}

// finishedOf subscribes to call.finished and returns a reader of the events about lead.
func finishedOf(t *testing.T, b *servicetest.Broker) func(lead int64) []ingest.Finished {
	t.Helper()
	queue := "test.call-finished." + uuid.NewString()[:8]
	c := b.Collect(t, declare(t, b, mq.Subscription(ingest.Exchange, queue, ingest.FinishedKey), queue))
	return func(lead int64) []ingest.Finished {
		var out []ingest.Finished
		for _, m := range c.Messages() {
			var f ingest.Finished
			require.NoError(t, json.Unmarshal(m.Body, &f))
			assert.Equal(t, f.EventID, m.MessageId, "message_id is the event id")
			assert.Equal(t, ingest.FinishedType, m.Type)
			assert.Equal(t, "application/json", m.ContentType)
			if f.LeadID == lead {
				out = append(out, f)
			}
		}
		return out
	}
}

// declare runs topology on the test's connection and returns queue.
func declare(t *testing.T, b *servicetest.Broker, topology mq.Topology, queue string) string {
	t.Helper()
	ch, err := b.Conn.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	require.NoError(t, topology(ch))
	return queue
}

func callCount(t *testing.T, lead int64) int {
	t.Helper()
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM calls WHERE lead_id = $1`, lead))
	return n
}

type storedCall struct {
	ID              int64      `db:"id"`
	PlatformCallID  string     `db:"platform_call_id"`
	StatusID        int64      `db:"status_id"`
	ClientPhone     string     `db:"client_phone"`
	Total           int        `db:"total_duration_seconds"`
	Wait            int        `db:"wait_time_duration_seconds"`
	Talk            int        `db:"talk_time_duration_seconds"`
	CreatedAt       time.Time  `db:"created_at"`
	SourceEventID   string     `db:"source_event_id"`
	FinishedEventID string     `db:"finished_event_id"`
	PublishedAt     *time.Time `db:"finished_published_at"`
}

func callsOf(t *testing.T, lead int64) []storedCall {
	t.Helper()
	var out []storedCall
	require.NoError(t, env.DB.Select(&out, `SELECT id, platform_call_id, status_id, client_phone, total_duration_seconds,
		wait_time_duration_seconds, talk_time_duration_seconds, created_at, source_event_id, finished_event_id,
		finished_published_at FROM calls WHERE lead_id = $1 ORDER BY id`, lead))
	return out
}

func allPublished(t *testing.T, lead int64, n int) func() bool {
	return func() bool {
		calls := callsOf(t, lead)
		if len(calls) != n {
			return false
		}
		for _, c := range calls {
			if c.PublishedAt == nil {
				return false
			}
		}
		return true
	}
}

func TestStoresEachCallOnceAndAnnouncesIt(t *testing.T) {
	r := startConsumer(t, env.DB)
	b := servicetest.Dial(t, env.AMQPURL, mq.WorkQueue(r.queue))
	finished := finishedOf(t, b)
	lead := servicetest.LeadID()
	first := servicetest.Event(lead, base)
	second := servicetest.Event(lead, base.Add(time.Minute))
	second.StatusCode, second.AnsweredAt, second.FinishInitiator, second.HasRecords = telephony.StatusNoAnswer, nil, nil, false
	second.AgentConnectedAt = nil
	again := first
	again.EventID = uuid.NewString() // the platform reports the same call again, as a new message

	b.PublishEvent(t, r.queue, first)
	servicetest.Eventually(t, 15*time.Second, allPublished(t, lead, 1), "first call stored and announced")
	b.PublishEvent(t, r.queue, again)
	b.PublishEvent(t, r.queue, second)
	servicetest.Eventually(t, 15*time.Second, allPublished(t, lead, 2), "second call stored and announced")
	servicetest.Eventually(t, 15*time.Second, func() bool { return len(finished(lead)) >= 2 }, "call.finished received")
	time.Sleep(700 * time.Millisecond) // room for a wrong duplicate to show up

	calls := callsOf(t, lead)
	require.Len(t, calls, 2, "the same call reported twice is stored once")
	c := calls[0]
	assert.Equal(t, first.PlatformCallID, c.PlatformCallID)
	assert.Equal(t, first.EventID, c.SourceEventID, "the first report wins")
	assert.Equal(t, int64(1), c.StatusID)
	assert.Equal(t, strings.TrimPrefix(first.ClientPhone, "+"), c.ClientPhone)
	assert.Equal(t, []int{107, 12, 95}, []int{c.Total, c.Wait, c.Talk})
	assert.True(t, c.CreatedAt.Equal(first.StartedAt), "the call record's time is the call's start")
	assert.Equal(t, []int{107, 107, 0}, []int{calls[1].Total, calls[1].Wait, calls[1].Talk}, "an unanswered call waited all along")

	events := finished(lead)
	require.Len(t, events, 2, "one call.finished per new call")
	byCall := map[int64]ingest.Finished{}
	for _, e := range events {
		byCall[e.CallID] = e
	}
	f := byCall[c.ID]
	assert.Equal(t, c.FinishedEventID, f.EventID)
	assert.Equal(t, ingest.Finished{EventID: c.FinishedEventID, Type: "call.finished", OccurredAt: "2026-11-21T10:01:47+00:00",
		CallID: c.ID, LeadID: lead, OrderID: first.OrderID, UserID: first.UserID, StatusID: 1, StatusCode: "answered",
		EndedAt: "2026-11-21T10:01:47+00:00", AnsweredAt: ptr("2026-11-21T10:00:12+00:00"),
		AgentConnectedAt: ptr("2026-11-21T10:00:13+00:00"), Data: f.Data}, f)
	assert.Equal(t, c.ID, f.Data.ID, "data is the call as the API returns it")
	assert.Equal(t, []int{107, 12, 95}, []int{f.Data.TotalDurationSeconds, f.Data.WaitTimeDurationSeconds, f.Data.TalkTimeDurationSeconds})
	assert.Equal(t, strings.TrimPrefix(first.ClientPhone, "+"), f.Data.ClientPhone)
	assert.Equal(t, "2026-11-21T10:00:00+00:00", f.Data.CreatedAt)
	assert.Equal(t, "no_answer", byCall[calls[1].ID].StatusCode)
	assert.Equal(t, int64(2), byCall[calls[1].ID].StatusID)
}

func ptr[T any](v T) *T { return &v }

// An answered call no agent took is stored and announced as abandoned, with its null agentConnectedAt.
func TestAnAnsweredCallWithoutAnAgentIsStoredAsAbandoned(t *testing.T) {
	r := startConsumer(t, env.DB)
	b := servicetest.Dial(t, env.AMQPURL, mq.WorkQueue(r.queue))
	finished := finishedOf(t, b)
	lead := servicetest.LeadID()
	ev := servicetest.Event(lead, base)
	ev.AgentConnectedAt = nil
	b.PublishEvent(t, r.queue, ev)
	servicetest.Eventually(t, 15*time.Second, func() bool { return len(finished(lead)) >= 1 }, "call.finished received")
	calls := callsOf(t, lead)
	require.Len(t, calls, 1)
	assert.Equal(t, int64(9), calls[0].StatusID, "stored as abandoned")
	f := finished(lead)[0]
	assert.Equal(t, "abandoned", f.StatusCode)
	assert.Equal(t, ptr("2026-11-21T10:00:12+00:00"), f.AnsweredAt)
	assert.Nil(t, f.AgentConnectedAt)
	var stored *time.Time
	require.NoError(t, env.DB.Get(&stored, `SELECT agent_connected_at FROM calls WHERE id = $1`, calls[0].ID))
	assert.Nil(t, stored)
}

func delivery(t *testing.T, ev any) mq.Delivery {
	t.Helper()
	body, ok := ev.([]byte)
	if !ok {
		var err error
		body, err = json.Marshal(ev)
		require.NoError(t, err)
	}
	return mq.Delivery{Body: body}
}

func TestDuplicateInsideOneBatch(t *testing.T) {
	b := servicetest.Dial(t, env.AMQPURL, mq.EventExchange(ingest.Exchange))
	finished := finishedOf(t, b)
	pub := mq.NewPublisher(b.Conn)
	t.Cleanup(pub.Close)
	consumer := ingest.NewConsumer(ingest.NewStore(env.DB), pub, zap.NewNop())
	lead := servicetest.LeadID()
	one, two := servicetest.Event(lead, base), servicetest.Event(lead, base.Add(time.Second))
	oneAgain, twoAgain := one, two
	oneAgain.EventID, twoAgain.EventID = uuid.NewString(), uuid.NewString()

	results := consumer.Handle(context.Background(), []mq.Delivery{
		delivery(t, one), delivery(t, oneAgain), delivery(t, two), delivery(t, twoAgain), delivery(t, one)})
	for i, r := range results {
		assert.Equal(t, mq.Ack, r.Outcome, "message %d: %s", i, r.Reason)
	}
	assert.Equal(t, 2, callCount(t, lead))
	servicetest.Eventually(t, 10*time.Second, func() bool { return len(finished(lead)) >= 2 }, "call.finished received")
	time.Sleep(500 * time.Millisecond)
	assert.Len(t, finished(lead), 2, "one call.finished per call, however often it came in the batch")

	// The same batch again (a redelivery after a lost ack) changes nothing and announces nothing.
	results = consumer.Handle(context.Background(), []mq.Delivery{delivery(t, one), delivery(t, two)})
	assert.Equal(t, []mq.Result{{Outcome: mq.Ack}, {Outcome: mq.Ack}}, results)
	time.Sleep(500 * time.Millisecond)
	assert.Len(t, finished(lead), 2)
	assert.Equal(t, 2, callCount(t, lead))
}

func TestBadEventsAreDeadLetteredWithTheReason(t *testing.T) {
	r := startConsumer(t, env.DB)
	b := servicetest.Dial(t, env.AMQPURL, mq.WorkQueue(r.queue))
	dead := b.Collect(t, r.queue+mq.DeadLetterSuffix)
	lead := servicetest.LeadID()
	invalid := servicetest.Event(lead, base)
	invalid.Direction, invalid.ClientPhone = "sideways", "12"
	unknown := servicetest.Event(lead, base)
	unknown.StatusCode = "teleported"
	good := servicetest.Event(lead, base)

	b.PublishRaw(t, r.queue, "raw-1", []byte("call ended at ten"))
	b.PublishEvent(t, r.queue, invalid)
	b.PublishEvent(t, r.queue, unknown)
	b.PublishEvent(t, r.queue, good)
	servicetest.Eventually(t, 15*time.Second, func() bool { return len(dead.Messages()) >= 3 }, "three dead letters")

	reasons := map[string]string{}
	for _, m := range dead.Messages() {
		reason, _ := m.Headers["x-dead-letter-reason"].(string)
		reasons[m.MessageId] = reason
		assert.Equal(t, r.queue, m.Headers["x-original-queue"])
	}
	assert.Contains(t, reasons["raw-1"], "undecodable event")
	assert.Contains(t, reasons[invalid.EventID], "invalid event")
	assert.Contains(t, reasons[invalid.EventID], "direction: must be incoming or outgoing")
	assert.Contains(t, reasons[invalid.EventID], "clientPhone: must be a phone number in E.164 format")
	assert.Contains(t, reasons[unknown.EventID], `statusCode: unknown call status "teleported"`)
	servicetest.Eventually(t, 10*time.Second, allPublished(t, lead, 1), "the good event of the same batch is stored")
	assert.Equal(t, good.PlatformCallID, callsOf(t, lead)[0].PlatformCallID)
}

// proxiedDB opens the service's schema through a proxy that the test can cut.
func proxiedDB(t *testing.T) (*sqlx.DB, *servicetest.Proxy) {
	t.Helper()
	u, err := url.Parse(env.DBURL)
	require.NoError(t, err)
	proxy := servicetest.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	conn, err := db.Open(context.Background(), u.String(), migrations.Schema.Name, 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn, proxy
}

func TestDatabaseDownIsRetried(t *testing.T) {
	conn, proxy := proxiedDB(t)
	lead := servicetest.LeadID()

	t.Run("the handler asks for a retry", func(t *testing.T) {
		b := servicetest.Dial(t, env.AMQPURL)
		pub := mq.NewPublisher(b.Conn)
		t.Cleanup(pub.Close)
		consumer := ingest.NewConsumer(ingest.NewStore(conn), pub, zap.NewNop())
		proxy.Down()
		defer proxy.Up(t)
		results := consumer.Handle(context.Background(), []mq.Delivery{
			delivery(t, servicetest.Event(lead, base)), delivery(t, []byte("{"))})
		assert.Equal(t, mq.Retry, results[0].Outcome, "a valid event waits for the database")
		assert.NotEmpty(t, results[0].Reason)
		assert.Equal(t, mq.DeadLetter, results[1].Outcome, "an undecodable one is dead-lettered all the same")
	})

	t.Run("the consumer stores the call once the database is back", func(t *testing.T) {
		r := startConsumer(t, conn)
		b := servicetest.Dial(t, env.AMQPURL, mq.WorkQueue(r.queue))
		dead := b.Collect(t, r.queue+mq.DeadLetterSuffix)
		finished := finishedOf(t, b)
		proxy.Down()
		ev := servicetest.Event(lead, base)
		b.PublishEvent(t, r.queue, ev)
		time.Sleep(2 * time.Second)
		assert.Equal(t, 0, callCount(t, lead), "nothing stored while the database is down")
		assert.Empty(t, dead.Messages(), "a database outage never dead-letters")

		proxy.Up(t)
		servicetest.Eventually(t, 30*time.Second, allPublished(t, lead, 1), "stored after the database came back")
		servicetest.Eventually(t, 10*time.Second, func() bool { return len(finished(lead)) == 1 }, "announced once")
		assert.Empty(t, dead.Messages())
	})
}

func TestRepublishesWhenAnEarlierDeliveryGotNoConfirm(t *testing.T) {
	r := startConsumer(t, env.DB)
	b := servicetest.Dial(t, env.AMQPURL, mq.WorkQueue(r.queue))
	finished := finishedOf(t, b)
	lead := servicetest.LeadID()
	ev := servicetest.Event(lead, base)

	// An earlier delivery committed the call, then lost the broker before call.finished was
	// confirmed, so the platform's message was never acked.
	store := ingest.NewStore(env.DB)
	c, err := ingest.FromEvent(ev, time.Now())
	require.NoError(t, err)
	pending, err := store.Save(context.Background(), []ingest.Resolved{{NewCall: c, StatusID: 1}})
	require.NoError(t, err)
	require.Len(t, pending, 1)

	b.PublishEvent(t, r.queue, ev) // the redelivery
	servicetest.Eventually(t, 15*time.Second, allPublished(t, lead, 1), "published on redelivery")
	servicetest.Eventually(t, 10*time.Second, func() bool { return len(finished(lead)) == 1 }, "call.finished received")
	assert.Equal(t, pending[0].FinishedEventID.String(), finished(lead)[0].EventID, "the event id was fixed at insert")
	assert.Equal(t, 1, callCount(t, lead))
}

func TestSurvivesBrokerConnectionLoss(t *testing.T) {
	r := startConsumer(t, env.DB)
	b := servicetest.Dial(t, env.AMQPURL, mq.WorkQueue(r.queue))
	finished := finishedOf(t, b)
	lead := servicetest.LeadID()
	publish := func(from, n int) {
		for i := from; i < from+n; i++ {
			b.PublishEvent(t, r.queue, servicetest.Event(lead, base.Add(time.Duration(i)*time.Second)))
		}
	}
	publish(0, 20)
	servicetest.Eventually(t, 15*time.Second, allPublished(t, lead, 20), "first 20 stored")

	servicetest.CloseConnections(t, r.name)
	publish(20, 20) // while the consumer is reconnecting
	servicetest.Eventually(t, 60*time.Second, allPublished(t, lead, 40), "every event stored after the loss")
	assert.Greater(t, r.conn.Connects(), int64(1), "the consumer reconnected")

	servicetest.Eventually(t, 15*time.Second, func() bool {
		seen := map[int64]bool{}
		for _, f := range finished(lead) {
			seen[f.CallID] = true
		}
		return len(seen) == 40
	}, "call.finished for every call")
	assert.Equal(t, 40, callCount(t, lead))
}

func TestACallTheDatabaseRefusesIsDeadLetteredAndTheOthersStored(t *testing.T) {
	// A rule only the database knows, standing for any refusal the event's checks cannot foresee.
	_, err := env.DB.Exec(`ALTER TABLE calls ADD CONSTRAINT test_refused CHECK (platform_call_id NOT LIKE 'refused-%') NOT VALID`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = env.DB.Exec(`ALTER TABLE calls DROP CONSTRAINT test_refused`) })

	r := startConsumer(t, env.DB)
	b := servicetest.Dial(t, env.AMQPURL, mq.WorkQueue(r.queue))
	dead := b.Collect(t, r.queue+mq.DeadLetterSuffix)
	finished := finishedOf(t, b)
	lead := servicetest.LeadID()
	poison := servicetest.Event(lead, base)
	poison.PlatformCallID = "refused-" + poison.PlatformCallID
	b.PublishEvent(t, r.queue, poison)
	for i := 1; i <= 10; i++ {
		b.PublishEvent(t, r.queue, servicetest.Event(lead, base.Add(time.Duration(i)*time.Minute)))
	}

	servicetest.Eventually(t, 20*time.Second, allPublished(t, lead, 10), "every good call stored and announced")
	servicetest.Eventually(t, 10*time.Second, func() bool { return len(dead.Messages()) == 1 }, "the refused call dead-lettered")
	m := dead.Messages()[0]
	assert.Equal(t, poison.EventID, m.MessageId)
	reason, _ := m.Headers["x-dead-letter-reason"].(string)
	assert.Contains(t, reason, "refused by the database")
	assert.Contains(t, reason, "test_refused")
	servicetest.Eventually(t, 10*time.Second, func() bool { return len(finished(lead)) == 10 }, "call.finished for every good call")
	for _, c := range callsOf(t, lead) {
		assert.NotEqual(t, poison.PlatformCallID, c.PlatformCallID)
	}
	assert.Len(t, dead.Messages(), 1)
}

func TestACatalogTheDatabaseRefusesIsNotRetriedWithoutLimit(t *testing.T) {
	// A connection to a schema without the service's tables: every read is refused (42P01).
	wrong, err := db.Open(context.Background(), env.DBURL, "public", 2)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wrong.Close() })
	b := servicetest.Dial(t, env.AMQPURL)
	pub := mq.NewPublisher(b.Conn)
	t.Cleanup(pub.Close)
	consumer := ingest.NewConsumer(ingest.NewStore(wrong), pub, zap.NewNop())
	results := consumer.Handle(context.Background(), []mq.Delivery{delivery(t, servicetest.Event(servicetest.LeadID(), base))})
	assert.Equal(t, mq.Fail, results[0].Outcome, "counted towards dead-lettering, not retried for ever")
	assert.Contains(t, results[0].Reason, "call_statuses")
}
