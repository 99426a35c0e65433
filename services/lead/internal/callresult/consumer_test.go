package callresult_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/servicetest"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "lead_callresult", func(e *servicetest.Env) { env = e })
}

// Lead status ids of migration 00001.
const (
	statusNew, statusCallback, statusNoAnswer, statusQualified, statusWrongNumber, statusBusy = 1, 2, 3, 4, 7, 8
)

var orderSeq, callSeq, phoneSeq atomic.Int64

// newOrder is an order known to the order cache: calls Monday to Friday 09:00–18:00, no calls on
// Tuesday 24 November 2026, calls again 30 minutes after the first call and 2 hours after the
// second.
func newOrder(t *testing.T) orders.Order {
	t.Helper()
	id := 5000 + orderSeq.Add(1)
	day := []string{"09:00", "18:00"}
	o := orders.Order{ID: id, Code: "calls-" + strconv.FormatInt(id, 10),
		CallSchedule:         [][]string{day, day, day, day, day, {}, {}},
		CallHolidayOverrides: []string{"24.11.2026"},
		CallAttemptGroupID:   &id,
		CallAttemptGroup:     &orders.AttemptGroup{ID: id, Intervals: []int64{30, 120}},
	}
	env.Orders.Remember(o)
	return o
}

// newLead creates a lead of o through the API, at utcOffset (nil: unknown).
func newLead(t *testing.T, o orders.Order, utcOffset any) int64 {
	t.Helper()
	body := map[string]any{"leadType": "straight", "orderId": o.ID, "orderCode": o.Code, "utcOffset": utcOffset,
		"phone": fmt.Sprintf("+7916%07d", 3000000+phoneSeq.Add(1))}
	res := env.Do(t, http.MethodPost, "/v2/lead/create", body)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	return res.ID()
}

// finished is a call.finished body as call-ingest sends it (docs/events.md).
func finished(lead int64, o orders.Order, outcome string, ended time.Time) map[string]any {
	e := ended.UTC().Format("2006-01-02T15:04:05-07:00")
	return map[string]any{"eventId": uuid.NewString(), "type": "call.finished", "occurredAt": e,
		"callId": 700000 + callSeq.Add(1), "leadId": lead, "orderId": o.ID, "userId": 5, "statusId": 2,
		"statusCode": outcome, "endedAt": e}
}

func bodyOf(t *testing.T, ev map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	return b
}

func deliveries(t *testing.T, events ...map[string]any) []mq.Delivery {
	out := make([]mq.Delivery, len(events))
	for i, ev := range events {
		out[i] = mq.Delivery{MessageId: fmt.Sprint(ev["eventId"]), Body: bodyOf(t, ev)}
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

type leadState struct {
	Attempts        int        `db:"attempts"`
	StatusID        int64      `db:"status_id"`
	PlanningCallAt  *time.Time `db:"planning_call_at"`
	LastCallEndedAt *time.Time `db:"last_call_ended_at"`
}

func stateOf(t *testing.T, id int64) leadState {
	t.Helper()
	var s leadState
	require.NoError(t, env.DB.Get(&s, `SELECT attempts, status_id, planning_call_at, last_call_ended_at FROM leads WHERE id = $1`, id))
	if s.PlanningCallAt != nil {
		p := s.PlanningCallAt.UTC()
		s.PlanningCallAt = &p
	}
	if s.LastCallEndedAt != nil {
		p := s.LastCallEndedAt.UTC()
		s.LastCallEndedAt = &p
	}
	return s
}

func recorded(t *testing.T, eventID any) (outcome, reason string) {
	t.Helper()
	var row struct {
		Outcome string  `db:"outcome"`
		Reason  *string `db:"reason"`
	}
	require.NoError(t, env.DB.Get(&row, `SELECT outcome, reason FROM lead_call_results WHERE event_id = $1`, eventID))
	if row.Reason != nil {
		reason = *row.Reason
	}
	return row.Outcome, reason
}

func consumer() *callresult.Consumer {
	return callresult.NewConsumer(callresult.NewStore(env.DB, env.Catalog), env.Orders, zap.NewNop())
}

func utc(day, hour, minute int) time.Time {
	return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC)
}

func ptr[T any](v T) *T { return &v }

// running is the consumer of lead.call-finished as lead-worker runs it, with a connection of the
// test's own to publish and to read the dead letters.
type running struct {
	conn *mq.Conn
	pub  *mq.Publisher
}

func start(t *testing.T) running {
	t.Helper()
	log := zap.NewNop()
	conn := mq.Dial(env.AMQPURL, "callresult-test", log, mq.Subscription(callresult.Exchange, callresult.Queue, callresult.FinishedKey))
	wctx, wcancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer wcancel()
	require.NoError(t, conn.Wait(wctx))
	pub := mq.NewPublisher(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = conn.Consume(ctx, mq.ConsumerConfig{Queue: callresult.Queue, BatchSize: 20, BatchWait: 10 * time.Millisecond,
			Workers: 2, MaxAttempts: 3, Tag: "callresult-test"}, consumer().Handle)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		pub.Close()
		conn.Close()
	})
	return running{conn: conn, pub: pub}
}

func (r running) publish(t *testing.T, id string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.pub.Publish(ctx, callresult.Exchange, callresult.FinishedKey, mq.Message{ID: id, Type: "call.finished", Body: body}))
}

func (r running) send(t *testing.T, ev map[string]any) {
	t.Helper()
	r.publish(t, fmt.Sprint(ev["eventId"]), bodyOf(t, ev))
}

func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, 15*time.Second, 20*time.Millisecond, what)
}

func TestEventsFromTheBrokerUpdateTheLead(t *testing.T) {
	r := start(t)
	o := newOrder(t)
	lead := newLead(t, o, 3)

	// Monday 17:45 at +3; +30 min is after the window, Tuesday is a holiday: Wednesday 09:00 at +3.
	first := finished(lead, o, callresult.OutcomeNoAnswer, utc(23, 14, 45))
	r.send(t, first)
	eventually(t, func() bool { return stateOf(t, lead).Attempts == 1 }, "first call applied")
	assert.Equal(t, leadState{Attempts: 1, StatusID: statusNoAnswer, PlanningCallAt: ptr(utc(25, 6, 0)), LastCallEndedAt: ptr(utc(23, 14, 45))}, stateOf(t, lead))

	res := env.Do(t, http.MethodGet, fmt.Sprintf("/v2/lead/detail/%d", lead), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var detail map[string]any
	require.NoError(t, json.Unmarshal(res.Data, &detail))
	assert.Equal(t, float64(statusNoAnswer), detail["statusId"])
	assert.Equal(t, "2026-11-25T06:00:00+00:00", detail["planningCallDateTime"])

	// The same event again (a duplicate call-ingest may send) changes nothing; the next call is
	// busy, 2 hours later inside the window.
	r.send(t, first)
	second := finished(lead, o, callresult.OutcomeBusy, utc(25, 6, 10))
	r.send(t, second)
	eventually(t, func() bool { return stateOf(t, lead).Attempts >= 2 }, "second call applied")
	// Room for a wrongly applied duplicate to show.
	unknown := finished(999999999, o, callresult.OutcomeAnswered, utc(25, 6, 11))
	r.send(t, unknown)
	eventually(t, func() bool {
		var n int
		require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM lead_call_results WHERE event_id = $1`, unknown["eventId"]))
		return n == 1
	}, "unknown lead recorded")
	assert.Equal(t, leadState{Attempts: 2, StatusID: statusBusy, PlanningCallAt: ptr(utc(25, 8, 10)), LastCallEndedAt: ptr(utc(25, 6, 10))}, stateOf(t, lead))
	outcome, reason := recorded(t, unknown["eventId"])
	assert.Equal(t, callresult.Skipped, outcome)
	assert.Equal(t, "lead 999999999 does not exist", reason)

	r.publish(t, "garbage-1", []byte("the call ended"))
	r.send(t, finished(lead, o, callresult.OutcomeInvalidNumber, utc(25, 8, 15)))
	eventually(t, func() bool { return stateOf(t, lead).Attempts == 3 }, "third call applied")
	assert.Equal(t, leadState{Attempts: 3, StatusID: statusWrongNumber, LastCallEndedAt: ptr(utc(25, 8, 15))}, stateOf(t, lead))

	ch, err := r.conn.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	var dead mq.Delivery
	eventually(t, func() bool {
		d, ok, err := ch.Get(callresult.Queue+mq.DeadLetterSuffix, true)
		require.NoError(t, err)
		dead = d
		return ok
	}, "undecodable event dead-lettered")
	assert.Equal(t, "garbage-1", dead.MessageId)
	assert.Contains(t, dead.Headers["x-dead-letter-reason"], "undecodable event")

	eventually(t, func() bool {
		_, messages, err := r.conn.QueueConsumers(context.Background(), callresult.Queue)
		require.NoError(t, err)
		return messages == 0
	}, "every event acked")
}

func TestDuplicatesInOneBatchAndAcrossBatches(t *testing.T) {
	o := newOrder(t)
	lead := newLead(t, o, nil)
	c := consumer()
	one := finished(lead, o, callresult.OutcomeNoAnswer, utc(23, 10, 0))
	sameCall := finished(lead, o, callresult.OutcomeNoAnswer, utc(23, 10, 0))
	sameCall["callId"] = one["callId"] // another event id about the same call
	results := c.Handle(context.Background(), deliveries(t, one, one, sameCall))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack, mq.Ack}, outcomes(results))
	want := leadState{Attempts: 1, StatusID: statusNoAnswer, PlanningCallAt: ptr(utc(23, 10, 30)), LastCallEndedAt: ptr(utc(23, 10, 0))}
	assert.Equal(t, want, stateOf(t, lead))

	// Redelivered after a lost ack.
	results = c.Handle(context.Background(), deliveries(t, one))
	assert.Equal(t, []mq.Outcome{mq.Ack}, outcomes(results))
	assert.Equal(t, want, stateOf(t, lead))
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM lead_call_results WHERE lead_id = $1`, lead))
	assert.Equal(t, 1, n)
}

func TestCallsOfOneLeadApplyInTheOrderTheyEnded(t *testing.T) {
	o := newOrder(t)
	lead := newLead(t, o, nil)
	c := consumer()
	later := finished(lead, o, callresult.OutcomeBusy, utc(23, 11, 0))
	earlier := finished(lead, o, callresult.OutcomeNoAnswer, utc(23, 10, 0))
	results := c.Handle(context.Background(), deliveries(t, later, earlier))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack}, outcomes(results))
	// The earlier call is the first attempt, the later one the second (2 hours).
	assert.Equal(t, leadState{Attempts: 2, StatusID: statusBusy, PlanningCallAt: ptr(utc(23, 13, 0)), LastCallEndedAt: ptr(utc(23, 11, 0))}, stateOf(t, lead))

	// A call reported after a later one was applied only counts.
	late := finished(lead, o, callresult.OutcomeInvalidNumber, utc(23, 10, 30))
	assert.Equal(t, []mq.Outcome{mq.Ack}, outcomes(c.Handle(context.Background(), deliveries(t, late))))
	assert.Equal(t, leadState{Attempts: 3, StatusID: statusBusy, PlanningCallAt: ptr(utc(23, 13, 0)), LastCallEndedAt: ptr(utc(23, 11, 0))}, stateOf(t, lead))
}

func TestStatusesSetThroughTheAPIDecide(t *testing.T) {
	o := newOrder(t)
	c := consumer()

	qualified := newLead(t, o, nil)
	res := env.Do(t, http.MethodPost, fmt.Sprintf("/v2/lead/update/%d", qualified), map[string]any{"statusId": statusQualified, "planningCallDateTime": "2026-11-30T10:00:00Z"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	c.Handle(context.Background(), deliveries(t, finished(qualified, o, callresult.OutcomeNoAnswer, utc(23, 10, 0))))
	assert.Equal(t, leadState{Attempts: 1, StatusID: statusQualified, LastCallEndedAt: ptr(utc(23, 10, 0))}, stateOf(t, qualified),
		"a final status stays and gets no next call")

	callback := newLead(t, o, nil)
	res = env.Do(t, http.MethodPost, fmt.Sprintf("/v2/lead/update/%d", callback), map[string]any{"statusId": statusCallback, "planningCallDateTime": "2026-11-26T15:00:00Z"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	c.Handle(context.Background(), deliveries(t, finished(callback, o, callresult.OutcomeAnswered, utc(23, 10, 0))))
	assert.Equal(t, leadState{Attempts: 1, StatusID: statusCallback, PlanningCallAt: ptr(utc(26, 15, 0)), LastCallEndedAt: ptr(utc(23, 10, 0))}, stateOf(t, callback),
		"the agent's call-back time is kept")

	answered := newLead(t, o, nil)
	c.Handle(context.Background(), deliveries(t, finished(answered, o, callresult.OutcomeAnswered, utc(23, 10, 0))))
	assert.Equal(t, leadState{Attempts: 1, StatusID: statusNew, LastCallEndedAt: ptr(utc(23, 10, 0))}, stateOf(t, answered))
}

func TestResetAttemptsOfACallbackLead(t *testing.T) {
	o := newOrder(t)
	o.CallAttemptGroup.ResetAttemptsEnabled = true
	env.Orders.Remember(o)
	lead := newLead(t, o, nil)
	c := consumer()
	c.Handle(context.Background(), deliveries(t,
		finished(lead, o, callresult.OutcomeNoAnswer, utc(23, 10, 0)), finished(lead, o, callresult.OutcomeNoAnswer, utc(23, 11, 0))))
	assert.Equal(t, 2, stateOf(t, lead).Attempts)
	res := env.Do(t, http.MethodPost, fmt.Sprintf("/v2/lead/update/%d", lead), map[string]any{"statusId": statusCallback, "planningCallDateTime": nil})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	// No call-back time chosen: the series starts over with the first interval.
	c.Handle(context.Background(), deliveries(t, finished(lead, o, callresult.OutcomeAnswered, utc(23, 12, 0))))
	assert.Equal(t, leadState{Attempts: 1, StatusID: statusCallback, PlanningCallAt: ptr(utc(23, 12, 30)), LastCallEndedAt: ptr(utc(23, 12, 0))}, stateOf(t, lead))
}

func TestEventsThatNameTheWrongOrderAreSkipped(t *testing.T) {
	o, other := newOrder(t), newOrder(t)
	lead := newLead(t, o, nil)
	ev := finished(lead, other, callresult.OutcomeNoAnswer, utc(23, 10, 0))
	assert.Equal(t, []mq.Outcome{mq.Ack}, outcomes(consumer().Handle(context.Background(), deliveries(t, ev))))
	assert.Equal(t, leadState{StatusID: statusNew}, stateOf(t, lead))
	outcome, reason := recorded(t, ev["eventId"])
	assert.Equal(t, callresult.Skipped, outcome)
	assert.Equal(t, fmt.Sprintf("lead %d belongs to order %d, not %d", lead, o.ID, other.ID), reason)
}

func TestOrderServiceDownRetriesUntilTheOrderIsKnown(t *testing.T) {
	o := newOrder(t)
	lead := newLead(t, o, nil)
	env.Orders.Drop(o.ID) // the order service is unreachable in these tests
	c := consumer()
	ev := finished(lead, o, callresult.OutcomeBusy, utc(23, 10, 0))
	bad := deliveries(t, map[string]any{"eventId": "x"})[0]
	results := c.Handle(context.Background(), append(deliveries(t, ev), bad))
	assert.Equal(t, []mq.Outcome{mq.Retry, mq.DeadLetter}, outcomes(results))
	assert.Contains(t, results[1].Reason, "invalid event")
	assert.Equal(t, 0, stateOf(t, lead).Attempts)

	env.Orders.Remember(o)
	assert.Equal(t, []mq.Outcome{mq.Ack}, outcomes(c.Handle(context.Background(), deliveries(t, ev))))
	assert.Equal(t, statusBusy, int(stateOf(t, lead).StatusID))
}

func TestDatabaseDownRetries(t *testing.T) {
	o := newOrder(t)
	down, err := sqlx.Open("postgres", "postgres://cc:cc@127.0.0.1:1/cc?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	defer down.Close()
	c := callresult.NewConsumer(callresult.NewStore(down, catalog.NewStore(down)), env.Orders, zap.NewNop())
	results := c.Handle(context.Background(), deliveries(t, finished(1, o, callresult.OutcomeBusy, utc(23, 10, 0))))
	assert.Equal(t, []mq.Outcome{mq.Retry}, outcomes(results))
}

func TestSkippedOrdersAreRecorded(t *testing.T) {
	o := newOrder(t)
	lead := newLead(t, o, nil)
	ev, err := callresult.Decode(bodyOf(t, finished(lead, o, callresult.OutcomeBusy, utc(23, 10, 0))), time.Now())
	require.NoError(t, err)
	out, err := callresult.NewStore(env.DB, env.Catalog).Apply(context.Background(), []callresult.Item{{Event: ev, Skip: "order 5 does not exist"}})
	require.NoError(t, err)
	assert.Equal(t, []callresult.Result{{Kind: callresult.Skipped, Reason: "order 5 does not exist"}}, out)
	assert.Equal(t, leadState{StatusID: statusNew}, stateOf(t, lead))
}

func TestACallDatedInTheFarFutureDoesNotFreezeItsLead(t *testing.T) {
	o := newOrder(t)
	c := consumer()

	// Such a call is refused at the door: it would sort after every real call of the lead.
	refused := newLead(t, o, nil)
	far := finished(refused, o, callresult.OutcomeAnswered, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
	results := c.Handle(context.Background(), deliveries(t, far))
	require.Equal(t, []mq.Outcome{mq.DeadLetter}, outcomes(results))
	assert.Contains(t, results[0].Reason, "endedAt: must be at most 5 minutes after the event is received")
	assert.Equal(t, leadState{StatusID: 1}, stateOf(t, refused), "nothing applied")

	// A lead whose last call was stored that far ahead before the rule still takes real calls.
	frozen := newLead(t, o, nil)
	_, err := env.DB.Exec(`UPDATE leads SET last_call_ended_at = '9999-12-31T00:00:00Z', attempts = 1 WHERE id = $1`, frozen)
	require.NoError(t, err)
	real := utc(23, 10, 0)
	call := finished(frozen, o, callresult.OutcomeNoAnswer, real)
	results = c.Handle(context.Background(), deliveries(t, call))
	require.Equal(t, []mq.Outcome{mq.Ack}, outcomes(results))
	outcome, _ := recorded(t, call["eventId"])
	assert.Equal(t, callresult.Applied, outcome)
	got := stateOf(t, frozen)
	assert.Equal(t, int64(statusNoAnswer), got.StatusID, "the real call decides")
	assert.Equal(t, ptr(real), got.LastCallEndedAt, "and the ordering goes on from it")
	assert.NotNil(t, got.PlanningCallAt, "with a next call planned")
}
