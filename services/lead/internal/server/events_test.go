package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/servicetest"
	"ccplatform/services/lead/internal/wiring"

	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// userID is servicetest.UserID, the actor of the test's requests.
const userID = int64(7)

// refuse makes the database refuse what cond (an SQL condition on table's rows) holds for, until
// the test ends (rows already stored are not checked): a fault after the checks, standing for any
// such fault.
func refuse(t *testing.T, table, cond string) {
	t.Helper()
	_, err := env.DB.Exec(`ALTER TABLE ` + table + ` ADD CONSTRAINT test_refused CHECK (NOT (` + cond + `)) NOT VALID`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = env.DB.Exec(`ALTER TABLE ` + table + ` DROP CONSTRAINT test_refused`) })
}

func TestSyncCreatesRecordLeadCreated(t *testing.T) {
	orderID, code := newOrder(t)
	id := create(t, body(orderID, code, "79161230101"))
	evs := env.LeadEvents(t, lead.EventCreated, id)
	require.Len(t, evs, 1)
	ev := evs[0]
	assert.Equal(t, orderID, ev.OrderID)
	assert.Equal(t, userID, ev.ActorUserID, "the X-User-Id of the request")
	assert.JSONEq(t, string(env.Detail(t, id)), string(ev.Data), "the lead as the detail route answers it")
	l := servicetest.LeadOf(t, ev)
	assert.Equal(t, []any{id, int64(1), "+79161230101"}, []any{l.ID, l.StatusID, l.Phone})
	assert.Equal(t, l.CreatedAt, ev.OccurredAt)
	assert.Empty(t, ev.ChangedFields)
	assert.Nil(t, ev.PreviousStatusID)

	res := env.Do(t, http.MethodPost, "/v1/lead/create", map[string]any{"lead_type": "straight", "client_phone": "79161230102",
		"order_id": orderID, "order_code": code, "messengerId": 1, "socialNetworkId": "2", "socialLogin": "s"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	evs = env.LeadEvents(t, lead.EventCreated, res.ID())
	require.Len(t, evs, 1)
	assert.Equal(t, userID, evs[0].ActorUserID)
	assert.JSONEq(t, string(env.Detail(t, res.ID())), string(evs[0].Data))
	assert.Equal(t, lead.MethodAPIv1, servicetest.LeadOf(t, evs[0]).CreateMethod)
}

func TestRefusedOrRolledBackCreatesRecordNothing(t *testing.T) {
	orderID, code := newOrder(t)
	before := len(env.Events(t, lead.EventCreated))
	res := env.Do(t, http.MethodPost, "/v2/lead/create", body(orderID, code, "12"))
	require.Equal(t, http.StatusBadRequest, res.Status)
	res = env.Do(t, http.MethodPost, "/v2/lead/create", body(987650, "x", "79161230103"))
	require.Equal(t, http.StatusServiceUnavailable, res.Status, "an order that cannot be checked")

	b := body(orderID, code, "79161230104")
	b["name"] = "refused"
	refuse(t, "leads", "name = 'refused'")
	res = env.Do(t, http.MethodPost, "/v2/lead/create", b)
	require.Equal(t, http.StatusInternalServerError, res.Status, res.Message)
	assert.Len(t, env.Events(t, lead.EventCreated), before, "no event of a lead never stored")
}

func TestUpdatesRecordLeadUpdatedAndStatusChanged(t *testing.T) {
	orderID, code := newOrder(t)
	b := body(orderID, code, "79161230110")
	b["name"] = "A"
	id := create(t, b)
	path := "/v2/lead/update/" + strconv.FormatInt(id, 10)

	res := env.Do(t, http.MethodPost, path, map[string]any{"name": "B", "statusId": 5, "priority": 0})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	updated := env.LeadEvents(t, lead.EventUpdated, id)
	require.Len(t, updated, 1)
	ev := updated[0]
	assert.Equal(t, []string{"name", "statusId"}, ev.ChangedFields, "priority was sent but kept its value")
	assert.Equal(t, orderID, ev.OrderID)
	assert.Equal(t, userID, ev.ActorUserID)
	assert.Nil(t, ev.PreviousStatusID)
	detail := env.Detail(t, id)
	assert.JSONEq(t, string(detail), string(ev.Data), "the lead after the update")
	l := servicetest.LeadOf(t, ev)
	assert.Equal(t, []any{id, int64(5), "+79161230110", "B"}, []any{l.ID, l.StatusID, l.Phone, *l.Name})

	changed := env.LeadEvents(t, lead.EventStatusChanged, id)
	require.Len(t, changed, 1)
	require.NotNil(t, changed[0].PreviousStatusID)
	assert.Equal(t, int64(1), *changed[0].PreviousStatusID)
	assert.Equal(t, userID, changed[0].ActorUserID)
	assert.Empty(t, changed[0].ChangedFields)
	assert.JSONEq(t, string(detail), string(changed[0].Data))

	// v1 names its fields its own way; the event names them as v2 does.
	res = env.Do(t, http.MethodPost, "/v1/lead/update/"+strconv.FormatInt(id, 10), map[string]any{"client_name": "C", "client_phone": "+1 212 555 1234"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	updated = env.LeadEvents(t, lead.EventUpdated, id)
	require.Len(t, updated, 2)
	assert.Equal(t, []string{"name", "phone", "utcOffset"}, updated[1].ChangedFields, "the new phone brings its zone")
	assert.JSONEq(t, string(env.Detail(t, id)), string(updated[1].Data))
	assert.Len(t, env.LeadEvents(t, lead.EventStatusChanged, id), 1, "the status did not change")
}

func TestUpdatesThatChangeNothingOrFailRecordNothing(t *testing.T) {
	orderID, code := newOrder(t)
	b := body(orderID, code, "79161230120")
	b["name"] = "A"
	id := create(t, b)
	path := "/v2/lead/update/" + strconv.FormatInt(id, 10)

	res := env.Do(t, http.MethodPost, path, map[string]any{"name": "A", "phone": "+7 916 123-01-20", "statusId": 1})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	res = env.Do(t, http.MethodPost, path, map[string]any{"statusId": 99})
	require.Equal(t, http.StatusBadRequest, res.Status)
	res = env.Do(t, http.MethodPost, path, map[string]any{"name": "x"}, "X-Access-Group", "arbitration")
	require.Equal(t, http.StatusForbidden, res.Status)

	refuse(t, "leads", "name = 'refused'")
	res = env.Do(t, http.MethodPost, path, map[string]any{"name": "refused", "statusId": 5})
	require.Equal(t, http.StatusInternalServerError, res.Status, res.Message)
	assert.Empty(t, env.LeadEvents(t, lead.EventUpdated, id))
	assert.Empty(t, env.LeadEvents(t, lead.EventStatusChanged, id))
}

// TestTheRelayPublishesLeadCreated runs lead-worker's relay (wiring.Relay) and reads a create's
// event from a queue bound to the events exchange.
func TestTheRelayPublishesLeadCreated(t *testing.T) {
	queue := "test.lead-created"
	topo := func(ch *amqp.Channel) error {
		if err := mq.EventExchange(event.Exchange)(ch); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare(queue, false, true, true, false, nil); err != nil {
			return err
		}
		return ch.QueueBind(queue, lead.EventCreated, event.Exchange, false, nil)
	}
	conn := mq.Dial(env.AMQPURL, "lead-events-test", zap.NewNop(), topo)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch, err := conn.Channel(ctx)
	require.NoError(t, err)
	defer ch.Close()
	deliveries, err := ch.Consume(queue, "", true, true, false, false, nil)
	require.NoError(t, err)

	pub := mq.NewPublisher(conn)
	defer pub.Close()
	relay, err := wiring.Relay(env.Settings, env.DB, pub, "test", zap.NewNop(), prometheus.NewRegistry())
	require.NoError(t, err)
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		relay.Run(ctx)
	}()
	defer func() {
		cancel()
		<-relayed
	}()

	orderID, code := newOrder(t)
	id := create(t, body(orderID, code, "79161230140"))
	for {
		select {
		case d := <-deliveries:
			// A batch's events of one type travel as one group message (event.GroupType).
			assert.Equal(t, event.GroupType, d.Type)
			assert.Equal(t, lead.EventCreated, d.RoutingKey)
			assert.Equal(t, uint8(amqp.Persistent), d.DeliveryMode)
			evs, bad, err := event.Expand(d.Type, d.Body)
			require.NoError(t, err)
			assert.Empty(t, bad)
			for _, ev := range evs {
				if servicetest.LeadOf(t, ev).ID != id {
					continue // an event of an earlier test
				}
				assert.Equal(t, lead.EventCreated, ev.Type)
				assert.True(t, strings.HasPrefix(d.MessageId, evs[0].ID+"+"), "the group's id names its first event")
				assert.Equal(t, orderID, ev.OrderID)
				assert.JSONEq(t, string(env.Detail(t, id)), string(ev.Data))
				return
			}
		case <-ctx.Done():
			t.Fatal("lead.created of the new lead never arrived")
		}
	}
}
