package outbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/requestid"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

const (
	schema   = "outboxtest"
	exchange = "events"
)

var (
	conn     *sqlx.DB
	vhostURL string
)

func TestMain(m *testing.M) {
	dbtest.Main(m, "pkg_outbox", func(u string) int {
		ctx := context.Background()
		var err error
		if conn, err = db.Open(ctx, u, schema, 16); err != nil {
			fmt.Fprintln(os.Stderr, "outbox:", err)
			return 1
		}
		defer conn.Close()
		items := fstest.MapFS{"00001_items.sql": &fstest.MapFile{Data: []byte(
			"-- +goose Up\nCREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL);\n")}}
		if err := db.Migrate(ctx, conn, schema, Migrations(), db.Migrations{Table: "app_version", FS: items}); err != nil {
			fmt.Fprintln(os.Stderr, "outbox:", err)
			return 1
		}
		var drop func() error
		if vhostURL, drop, err = mqtest.CreateVhost("outbox"); err != nil {
			fmt.Fprintln(os.Stderr, "outbox:", err)
			return 1
		}
		defer func() { _ = drop() }()
		return m.Run()
	})
}

// bound declares a queue of the test's own bound to the events exchange for key, and returns the
// connection (with a publisher) and a channel that receives every message on the queue.
func bound(t *testing.T, key string) (*mq.Conn, <-chan amqp.Delivery) {
	t.Helper()
	queue := "t." + t.Name()
	topo := func(ch *amqp.Channel) error {
		if err := mq.EventExchange(exchange)(ch); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare(queue, false, true, false, false, nil); err != nil {
			return err
		}
		return ch.QueueBind(queue, key, exchange, false, nil)
	}
	c := mq.Dial(vhostURL, t.Name(), zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), topo)
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := c.Channel(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ch.Close() })
	deliveries, err := ch.Consume(queue, "", true, true, false, false, nil)
	require.NoError(t, err)
	return c, deliveries
}

func reset(t *testing.T) {
	t.Helper()
	_, err := conn.Exec(`TRUNCATE outbox, items`)
	require.NoError(t, err)
}

// change inserts an item and records its event in one transaction; fail rolls it back.
func change(ctx context.Context, key string, i int, fail bool) error {
	return db.InTx(ctx, conn, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO items (name) VALUES ($1)`, fmt.Sprint(i)); err != nil {
			return err
		}
		msg := mq.Message{ID: fmt.Sprintf("ev-%d", i), Type: "item.created", Body: fmt.Appendf(nil, `{"n":%d}`, i)}
		if err := Add(ctx, tx, exchange, key, msg); err != nil {
			return err
		}
		if fail {
			return errors.New("the change fails after its event was added")
		}
		return nil
	})
}

func receive(t *testing.T, deliveries <-chan amqp.Delivery, n int) []amqp.Delivery {
	t.Helper()
	var got []amqp.Delivery
	timeout := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case d := <-deliveries:
			got = append(got, d)
		case <-timeout:
			t.Fatalf("received %d of %d messages", len(got), n)
		}
	}
	return got
}

func unpublished(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM outbox WHERE published_at IS NULL`))
	return n
}

func TestCommittedChangesArePublishedInOrderAndRolledBackOnesNever(t *testing.T) {
	reset(t)
	c, deliveries := bound(t, "item.created")
	ctx := requestid.With(context.Background(), "req-1")
	for i := range 30 {
		require.NoError(t, change(ctx, "item.created", i, false))
		require.Error(t, change(ctx, "item.created", 1000+i, true))
	}
	pub := mq.NewPublisher(c)
	defer pub.Close()
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		(&Relay{DB: conn, Publisher: pub, Interval: 20 * time.Millisecond, BatchSize: 7}).Run(rctx)
		close(done)
	}()
	defer func() { cancel(); <-done }()

	got := receive(t, deliveries, 30)
	for i, d := range got {
		assert.Equal(t, fmt.Sprintf("ev-%d", i), d.MessageId, "id order")
		assert.Equal(t, "item.created", d.Type)
		assert.Equal(t, "application/json", d.ContentType)
		assert.Equal(t, "req-1", d.Headers["request_id"])
		assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i), string(d.Body))
	}
	select {
	case d := <-deliveries:
		t.Fatalf("unexpected message %s (a rolled-back change, or a duplicate)", d.MessageId)
	case <-time.After(300 * time.Millisecond):
	}
	assert.Eventually(t, func() bool { return unpublished(t) == 0 }, 5*time.Second, 20*time.Millisecond)
}

// Three relays share the table, one publish at a time each or 16 at once (Parallel): every row is
// published once.
func TestRelaysShareTheTableWithoutDoublePublishing(t *testing.T) {
	for _, parallel := range []int{1, 16} {
		t.Run(fmt.Sprintf("parallel %d", parallel), func(t *testing.T) { relaysShareTheTable(t, parallel) })
	}
}

func relaysShareTheTable(t *testing.T, parallel int) {
	reset(t)
	c, deliveries := bound(t, "item.bulk")
	const n = 600
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				assert.NoError(t, change(context.Background(), "item.bulk", i, false))
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var relays sync.WaitGroup
	for range 3 {
		pub := mq.NewPublisher(c)
		defer pub.Close()
		relays.Add(1)
		go func() {
			defer relays.Done()
			(&Relay{DB: conn, Publisher: pub, Interval: 10 * time.Millisecond, BatchSize: 25, Parallel: parallel}).Run(ctx)
		}()
	}
	wg.Wait()
	got := receive(t, deliveries, n)
	// A message reaches the queue before its confirm reaches the relay. A relay stopped in between
	// gives up the wait and leaves the row for the next start to publish again (at least once, by
	// design), so stop the relays only once every row is marked.
	assert.Eventually(t, func() bool { return unpublished(t) == 0 }, 5*time.Second, 20*time.Millisecond)
	cancel()
	relays.Wait()
	seen := map[string]int{}
	for _, d := range got {
		seen[d.MessageId]++
	}
	assert.Len(t, seen, n, "every event published")
	select {
	case d := <-deliveries:
		t.Fatalf("message %s published twice", d.MessageId)
	case <-time.After(300 * time.Millisecond):
	}
	assert.Zero(t, unpublished(t))
}

func TestRowsWaitWhileTheBrokerIsUnreachable(t *testing.T) {
	reset(t)
	require.NoError(t, change(context.Background(), "item.wait", 1, false))
	// Nothing listens on port 1: the connection keeps re-dialing, as during an outage.
	dead := mq.Dial("amqp://guest:guest@127.0.0.1:1/", t.Name(), zap.NewNop())
	defer dead.Close()
	pub := mq.NewPublisher(dead)
	defer pub.Close()
	r := &Relay{DB: conn, Publisher: pub, PublishTimeout: 200 * time.Millisecond}
	n, err := r.RelayOnce(context.Background())
	require.ErrorIs(t, err, mq.ErrNotConfirmed)
	assert.Zero(t, n)
	assert.Equal(t, 1, unpublished(t), "the row stays for the next attempt")

	// A running relay keeps trying and stops cleanly.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r.Interval = 50 * time.Millisecond
	r.Run(ctx)
	assert.Equal(t, 1, unpublished(t))

	// Once a broker answers, the same row goes out.
	c, deliveries := bound(t, "item.wait")
	live := mq.NewPublisher(c)
	defer live.Close()
	n, err = (&Relay{DB: conn, Publisher: live}).RelayOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, "ev-1", receive(t, deliveries, 1)[0].MessageId)
}

func TestAddRefusesWhatItCannotKeep(t *testing.T) {
	err := db.InTx(context.Background(), conn, func(tx *sqlx.Tx) error {
		return Add(context.Background(), tx, exchange, "k", mq.Message{ID: "x", Headers: amqp.Table{"a": "b"}})
	})
	assert.ErrorIs(t, err, ErrHeaders)
	err = db.InTx(context.Background(), conn, func(tx *sqlx.Tx) error {
		return Add(context.Background(), tx, exchange, "k", mq.Message{Body: []byte(`{}`)})
	})
	assert.ErrorContains(t, err, "message id")
}

func TestPurgeDropsOnlyOldPublishedRows(t *testing.T) {
	reset(t)
	for i := range 3 {
		require.NoError(t, change(context.Background(), "item.purge", i, false))
	}
	_, err := conn.Exec(`UPDATE outbox SET published_at = now() - interval '2 days' WHERE message_id = 'ev-0'`)
	require.NoError(t, err)
	_, err = conn.Exec(`UPDATE outbox SET published_at = now() WHERE message_id = 'ev-1'`)
	require.NoError(t, err)
	n, err := (&Relay{DB: conn}).Purge(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	var left []string
	require.NoError(t, conn.Select(&left, `SELECT message_id FROM outbox ORDER BY id`))
	assert.Equal(t, []string{"ev-1", "ev-2"}, left)
}

// AddAll records a batch in one statement: nothing when its transaction rolls back, every message
// (keys, ids, types, bodies, the request id) when it commits.
func TestAddAllRecordsTheBatchWithItsTransaction(t *testing.T) {
	reset(t)
	ctx := requestid.With(context.Background(), "req-batch")
	batch := func(fail bool) error {
		return db.InTx(ctx, conn, func(tx *sqlx.Tx) error {
			msgs := []Keyed{
				{Key: "item.created", Msg: mq.Message{ID: "b-1", Type: "item.created", Body: []byte(`{"n":1}`)}},
				{Key: "item.deleted", Msg: mq.Message{ID: "b-2", Type: "item.deleted", Body: []byte(`{"n":2}`)}},
			}
			if err := AddAll(ctx, tx, exchange, msgs); err != nil {
				return err
			}
			if fail {
				return errors.New("rolled back")
			}
			return nil
		})
	}
	require.Error(t, batch(true))
	assert.Zero(t, unpublished(t), "a rolled-back batch leaves nothing")
	require.NoError(t, batch(false))
	var rows []struct {
		Key   string  `db:"routing_key"`
		ID    string  `db:"message_id"`
		Type  string  `db:"type"`
		Body  string  `db:"body"`
		ReqID *string `db:"request_id"`
	}
	require.NoError(t, conn.Select(&rows, `SELECT routing_key, message_id, type, convert_from(body, 'UTF8') AS body, request_id FROM outbox ORDER BY id`))
	require.Len(t, rows, 2)
	assert.Equal(t, []string{"item.created", "b-1", "item.created", `{"n":1}`}, []string{rows[0].Key, rows[0].ID, rows[0].Type, rows[0].Body})
	assert.Equal(t, []string{"item.deleted", "b-2", "item.deleted", `{"n":2}`}, []string{rows[1].Key, rows[1].ID, rows[1].Type, rows[1].Body})
	require.NotNil(t, rows[1].ReqID)
	assert.Equal(t, "req-batch", *rows[1].ReqID)

	err := db.InTx(ctx, conn, func(tx *sqlx.Tx) error {
		return AddAll(ctx, tx, exchange, []Keyed{{Key: "k", Msg: mq.Message{Type: "t"}}})
	})
	assert.ErrorContains(t, err, "message id is empty")
}

// With DeletePublished a row is gone once the broker confirmed it, instead of kept stamped.
func TestDeletePublishedLeavesNoRow(t *testing.T) {
	reset(t)
	c, deliveries := bound(t, "item.gone")
	for i := range 5 {
		require.NoError(t, change(context.Background(), "item.gone", i, false))
	}
	pub := mq.NewPublisher(c)
	defer pub.Close()
	n, err := (&Relay{DB: conn, Publisher: pub, DeletePublished: true}).RelayOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	receive(t, deliveries, 5)
	var rows int
	require.NoError(t, conn.Get(&rows, `SELECT count(*) FROM outbox`))
	assert.Zero(t, rows)
}

// With GroupType the rows of a batch that share a routing key travel as one group message, whose
// items are the rows' bodies in id order.
func TestGroupTypeJoinsABatchPerRoutingKey(t *testing.T) {
	reset(t)
	c, created := bound(t, "item.grouped")
	for i := range 5 {
		require.NoError(t, change(context.Background(), "item.grouped", i, false))
	}
	pub := mq.NewPublisher(c)
	defer pub.Close()
	n, err := (&Relay{DB: conn, Publisher: pub, GroupType: "item.group", Parallel: 4}).RelayOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 5, n, "rows published")
	got := receive(t, created, 1)
	assert.Equal(t, "item.group", got[0].Type)
	assert.Equal(t, "ev-0+5", got[0].MessageId)
	items, err := mq.SplitGroup(got[0].Body)
	require.NoError(t, err)
	require.Len(t, items, 5)
	for i, it := range items {
		assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i), string(it))
	}
	select {
	case d := <-created:
		t.Fatalf("a second message %s", d.MessageId)
	case <-time.After(300 * time.Millisecond):
	}
	assert.Zero(t, unpublished(t))
}

// NewRelay comes with the outbox metrics: the backlog collector registered, its rows counted.
func TestNewRelayCountsOnTheRegistry(t *testing.T) {
	reset(t)
	c, deliveries := bound(t, "item.counted")
	for i := range 3 {
		require.NoError(t, change(context.Background(), "item.counted", i, false))
	}
	pub := mq.NewPublisher(c)
	defer pub.Close()
	reg := prometheus.NewRegistry()
	r := NewRelay(conn, pub, zap.NewNop(), reg)
	r.Interval = 20 * time.Millisecond
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(rctx); close(done) }()
	defer func() { cancel(); <-done }()
	receive(t, deliveries, 3)
	assert.Eventually(t, func() bool {
		n, err := testutil.GatherAndCount(reg, "outbox_published_total")
		return err == nil && n == 1 && testutil.ToFloat64(r.Published) == 3
	}, 5*time.Second, 20*time.Millisecond)
}
