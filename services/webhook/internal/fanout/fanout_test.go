package fanout_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
	"ccplatform/services/webhook/internal/fanout"
	"ccplatform/services/webhook/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "webhook_fanout", func(e *servicetest.Env) { env = e })
}

// ownOrders is the order service's answer for each client of the test: the orders it owns. The
// order service's own rules are tested there and end to end (gateway/e2e/webhook_test.go).
type ownOrders map[int64][]int64

func (o ownOrders) CheckAsOf(_ context.Context, c web.Caller, id int64, _ time.Time) (visibleorders.Visible, bool, error) {
	s := visibleorders.Visible{OrderIDs: o[c.UserID]}
	return s, s.Contains(id), nil
}

func subscribe(t *testing.T, user, group string, body map[string]any) int64 {
	t.Helper()
	res := env.As(user, group).Do(t, http.MethodPost, "/v2/webhook/create", body)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	return res.ID()
}

func deliveredTo(t *testing.T, eventID string) []int64 {
	t.Helper()
	subs := []int64{}
	require.NoError(t, env.DB.Select(&subs, `SELECT subscription_id FROM deliveries WHERE event_id = $1 ORDER BY subscription_id`, eventID))
	return subs
}

// Events reach the subscriptions that asked for their type and whose owner may see their object:
// a client its own orders' events, staff every order's (narrowed by their orderIds), and an event
// of no order only its actor. A redelivered event adds nothing.
func TestEventsReachOnlyTheSubscriptionsWhoseOwnerMaySeeThem(t *testing.T) {
	url := "http://127.0.0.1:9/hook"
	clientA := subscribe(t, "701", "client", map[string]any{"url": url, "events": []string{"lead.created", "lead.job.failed"}})
	clientB := subscribe(t, "702", "client", map[string]any{"url": url, "events": []string{"lead.created"}})
	staff := subscribe(t, "1", "admin", map[string]any{"url": url, "events": []string{"lead.created"}})
	staffNarrow := subscribe(t, "1", "moderator", map[string]any{"url": url, "events": []string{"lead.created"}, "orderIds": []int64{99}})
	subscribe(t, "701", "client", map[string]any{"url": url, "events": []string{"call.finished"}})
	f := fanout.New(env.DB, ownOrders{701: {10, 11}, 702: {20}}, env.Clock.Now, zap.NewNop())

	ctx := context.Background()
	handle := func(ev event.Event) mq.Result {
		msg, err := ev.Message()
		require.NoError(t, err)
		return f.Handle(ctx, []mq.Delivery{{Body: msg.Body}})[0]
	}
	ev, err := event.New("lead.created", 10, map[string]any{"id": 1, "orderId": 10})
	require.NoError(t, err)
	assert.Equal(t, mq.Ack, handle(ev).Outcome)
	assert.Equal(t, []int64{clientA, staff}, deliveredTo(t, ev.ID))
	assert.Equal(t, mq.Ack, handle(ev).Outcome, "the broker redelivers it")
	assert.Equal(t, []int64{clientA, staff}, deliveredTo(t, ev.ID), "nothing twice")

	ev99, err := event.New("lead.created", 99, map[string]any{"id": 2})
	require.NoError(t, err)
	handle(ev99)
	assert.Equal(t, []int64{staff, staffNarrow}, deliveredTo(t, ev99.ID))

	job, err := event.New("lead.job.failed", 0, map[string]any{"jobId": "j"})
	require.NoError(t, err)
	job.ActorUserID = 701
	handle(job)
	assert.Equal(t, []int64{clientA}, deliveredTo(t, job.ID), "a job of no order: its submitter")
	// A job naming client B's order, submitted by client A: A's, never B's (it holds A's body).
	jobB, err := event.New("lead.job.failed", 20, map[string]any{"jobId": "k"})
	require.NoError(t, err)
	jobB.ActorUserID = 701
	handle(jobB)
	assert.Equal(t, []int64{clientA}, deliveredTo(t, jobB.ID))

	// The body sent is the payload: id, type, createdAt, data, and the extras of the type.
	prev := int64(1)
	changed, err := event.New("lead.created", 20, map[string]any{"id": 3})
	require.NoError(t, err)
	changed.PreviousStatusID = &prev
	handle(changed)
	assert.Equal(t, []int64{clientB, staff}, deliveredTo(t, changed.ID))
	var body []byte
	require.NoError(t, env.DB.Get(&body, `SELECT body FROM events WHERE id = $1`, changed.ID))
	assert.JSONEq(t, `{"id":"`+changed.ID+`","type":"lead.created","createdAt":"`+changed.OccurredAt+`","data":{"id":3},"previousStatusId":1}`, string(body))

	assert.Equal(t, mq.DeadLetter, f.Handle(ctx, []mq.Delivery{{Body: []byte(`{"type":"lead.created"}`)}})[0].Outcome)

	// A group (a relay's batch) is read item by item: its events recorded, an item that is not an
	// event dead-lettered alone.
	g1, err := event.New("lead.created", 10, map[string]any{"id": 4})
	require.NoError(t, err)
	g2, err := event.New("lead.created", 20, map[string]any{"id": 5})
	require.NoError(t, err)
	m1, err := g1.Message()
	require.NoError(t, err)
	m2, err := g2.Message()
	require.NoError(t, err)
	broken := []byte(`{"type":"lead.created"}`)
	res := f.Handle(ctx, []mq.Delivery{{Type: event.GroupType, Body: mq.JoinGroup([][]byte{m1.Body, broken, m2.Body})}})[0]
	assert.Equal(t, mq.DeadLetter, res.Outcome)
	assert.Equal(t, mq.JoinGroup([][]byte{broken}), res.Keep, "only the broken item")
	assert.Equal(t, []int64{clientA, staff}, deliveredTo(t, g1.ID))
	assert.Equal(t, []int64{clientB, staff}, deliveredTo(t, g2.ID))
}

// Through the broker: an event published on the events exchange ends as a delivery.
func TestTheQueueIsBoundToTheEventsExchange(t *testing.T) {
	sub := subscribe(t, "1", "admin", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"order.updated"}})
	broker := mq.Dial(env.AMQPURL, "test", zap.NewNop(), fanout.Topology())
	defer broker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, broker.Wait(ctx))
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	f := fanout.New(env.DB, ownOrders{}, env.Clock.Now, zap.NewNop())
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- broker.Consume(cctx, mq.ConsumerConfig{Queue: fanout.Queue, Prefetch: 10, BatchSize: 10, BatchWait: time.Millisecond, Workers: 1, MaxAttempts: 3}, f.Handle)
	}()
	ev, err := event.New("order.updated", 5, json.RawMessage(`{"id":5}`))
	require.NoError(t, err)
	msg, err := ev.Message()
	require.NoError(t, err)
	require.NoError(t, pub.Publish(ctx, event.Exchange, ev.Type, msg))
	require.Eventually(t, func() bool { return len(deliveredTo(t, ev.ID)) == 1 }, 20*time.Second, 50*time.Millisecond)
	assert.Equal(t, []int64{sub}, deliveredTo(t, ev.ID))
	stop()
	<-done
}

// active is the user service's answer of whether each owner is active (internal/owner asks it for
// real; tested there against an HTTP server answering as the user service does).
type active map[int64]bool

func (a active) Active(_ context.Context, id int64) (bool, error) { return a[id], nil }

// A subscription gets only the events its key may read (the key that created or last updated it;
// none stored: the owner's full rights), and none once its owner is deactivated or deleted.
func TestEventsStopForKeysThatMayNotReadThemAndForInactiveOwners(t *testing.T) {
	url := "http://127.0.0.1:9/scoped"
	full := subscribe(t, "801", "client", map[string]any{"url": url, "events": []string{"lead.created"}})
	narrowed := subscribe(t, "801", "client", map[string]any{"url": url, "events": []string{"lead.created"}})
	_, err := env.DB.Exec(`UPDATE subscriptions SET key_scopes = '{webhooks:write,calls:read}' WHERE id = $1`, narrowed)
	require.NoError(t, err)
	reading := subscribe(t, "802", "client", map[string]any{"url": url, "events": []string{"lead.created"}})
	_, err = env.DB.Exec(`UPDATE subscriptions SET key_scopes = '{webhooks:write,leads:read}' WHERE id = $1`, reading)
	require.NoError(t, err)
	gone := subscribe(t, "803", "client", map[string]any{"url": url, "events": []string{"lead.created"}})
	staffGone := subscribe(t, "804", "admin", map[string]any{"url": url, "events": []string{"lead.created"}})

	f := fanout.New(env.DB, ownOrders{801: {30}, 802: {30}, 803: {30}}, env.Clock.Now, zap.NewNop()).
		CheckingOwners(active{801: true, 802: true, 803: false, 804: false})
	ev, err := event.New("lead.created", 30, map[string]any{"id": 1, "orderId": 30})
	require.NoError(t, err)
	msg, err := ev.Message()
	require.NoError(t, err)
	assert.Equal(t, mq.Ack, f.Handle(context.Background(), []mq.Delivery{{Body: msg.Body}})[0].Outcome)
	assert.Equal(t, []int64{full, reading}, deliveredTo(t, ev.ID), "not %d (its key may not read leads), %d nor %d (inactive owners)",
		narrowed, gone, staffGone)
}
