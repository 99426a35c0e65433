package walrelay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/requestid"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus/testutil"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

const (
	schema      = "walrelaytest"
	exchange    = "events"
	prefix      = "walrelay_test"
	publication = "walrelay_test"
)

var (
	conn     *sqlx.DB
	dbURL    string
	slot     string
	vhostURL string
)

func TestMain(m *testing.M) {
	dbtest.Main(m, "pkg_walrelay", func(u string) int {
		ctx := context.Background()
		var err error
		dbURL = u
		if conn, err = db.Open(ctx, u, schema, 16); err != nil {
			fmt.Fprintln(os.Stderr, "walrelay:", err)
			return 1
		}
		defer conn.Close()
		if _, err := conn.Exec(`CREATE SCHEMA ` + schema + `; CREATE TABLE ` + schema + `.items (id bigserial PRIMARY KEY, name text NOT NULL)`); err != nil {
			fmt.Fprintln(os.Stderr, "walrelay:", err)
			return 1
		}
		name, err := DatabaseOf(u)
		if err != nil {
			fmt.Fprintln(os.Stderr, "walrelay:", err)
			return 1
		}
		slot = SlotName(prefix, name)
		if _, err := EnsureSlot(ctx, conn, slot, publication); err != nil {
			fmt.Fprintln(os.Stderr, "walrelay:", err)
			return 1
		}
		// A database with a slot cannot be dropped.
		defer func() { _ = DropSlot(ctx, conn, slot) }()
		var drop func() error
		if vhostURL, drop, err = mqtest.CreateVhost("walrelay"); err != nil {
			fmt.Fprintln(os.Stderr, "walrelay:", err)
			return 1
		}
		defer func() { _ = drop() }()
		return m.Run()
	})
}

// bound declares a queue of the test's own bound to the events exchange for key, and returns the
// connection and a channel that receives every message on the queue.
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

// change inserts an item and emits its messages (one per key) in one transaction; fail rolls it back.
func change(ctx context.Context, order string, i int, fail bool, keys ...string) error {
	return db.InTx(ctx, conn, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO items (name) VALUES ($1)`, fmt.Sprint(i)); err != nil {
			return err
		}
		var msgs []Message
		for k, key := range keys {
			msgs = append(msgs, Message{Exchange: exchange, Key: key, Order: order, Msg: mq.Message{
				ID: fmt.Sprintf("ev-%d-%d", i, k), Type: key, Body: fmt.Appendf(nil, `{"n": %d,  "k":%d}`, i, k)}})
		}
		if err := Emit(ctx, tx, prefix, msgs...); err != nil {
			return err
		}
		if fail {
			return errors.New("the change fails after its messages were emitted")
		}
		return nil
	})
}

func receive(t *testing.T, deliveries <-chan amqp.Delivery, n int) []amqp.Delivery {
	t.Helper()
	var got []amqp.Delivery
	timeout := time.After(30 * time.Second)
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

// quiet fails on any message arriving within a while (a rolled-back change, or a duplicate).
func quiet(t *testing.T, deliveries <-chan amqp.Delivery) {
	t.Helper()
	select {
	case d := <-deliveries:
		t.Fatalf("unexpected message %s", d.MessageId)
	case <-time.After(500 * time.Millisecond):
	}
}

// run starts a relay until the test ends (or stop is called) and returns stop. The relay reads
// the package's database and slot unless r names a database of its own.
func run(t *testing.T, r Relay) (stop func()) {
	t.Helper()
	if r.DB == nil {
		r.DB, r.URL, r.Slot = conn, dbURL, slot
	}
	r.Publication, r.Prefix = publication, prefix
	r.Retry = 50 * time.Millisecond
	if r.Log == nil {
		r.Log = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(done)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func confirmedFlush(t *testing.T) string {
	t.Helper()
	var lsn string
	require.NoError(t, conn.Get(&lsn, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, slot))
	return lsn
}

func TestCommittedMessagesArePublishedInCommitOrderAndRolledBackOnesNever(t *testing.T) {
	c, deliveries := bound(t, "item.created")
	ctx := requestid.With(context.Background(), "req-1")
	// One order key: its messages go out in commit order.
	for i := range 30 {
		require.NoError(t, change(ctx, "one", i, false, "item.created"))
		require.Error(t, change(ctx, "one", 1000+i, true, "item.created"))
	}
	pub := mq.NewPublisher(c)
	defer pub.Close()
	m := NewMetrics(slot)
	run(t, Relay{Publisher: pub, BatchSize: 7, Metrics: m})

	got := receive(t, deliveries, 30)
	for i, d := range got {
		assert.Equal(t, fmt.Sprintf("ev-%d-0", i), d.MessageId, "commit order")
		assert.Equal(t, "item.created", d.Type)
		assert.Equal(t, "application/json", d.ContentType)
		assert.Equal(t, "req-1", d.Headers["request_id"])
		assert.Equal(t, fmt.Sprintf(`{"n": %d,  "k":0}`, i), string(d.Body), "the body byte for byte")
	}
	quiet(t, deliveries)
	assert.Equal(t, 30.0, testutil.ToFloat64(m.published))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.holding))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.lag), "nothing waits")
}

// The slot advances only past what the broker confirmed: a relay stopped and started again
// publishes what was committed meanwhile, and nothing it had published before.
func TestARelayStartedAgainGoesOnFromTheSlotWithoutRepeats(t *testing.T) {
	c, deliveries := bound(t, "item.again")
	pub := mq.NewPublisher(c)
	defer pub.Close()
	ctx := context.Background()
	stop := run(t, Relay{Publisher: pub})
	for i := range 20 {
		require.NoError(t, change(ctx, fmt.Sprint(i), i, false, "item.again"))
	}
	receive(t, deliveries, 20)
	stop()
	// The server may still read the relay's last report while its session ends.
	require.Eventually(t, func() bool {
		var active bool
		return conn.Get(&active, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, slot) == nil && !active
	}, 10*time.Second, 5*time.Millisecond)
	before := confirmedFlush(t)
	for i := 20; i < 40; i++ {
		require.NoError(t, change(ctx, fmt.Sprint(i), i, false, "item.again"))
	}
	quiet(t, deliveries)
	assert.Equal(t, before, confirmedFlush(t), "nothing confirmed while no relay runs")
	run(t, Relay{Publisher: pub})
	var ids []string
	for _, d := range receive(t, deliveries, 20) {
		ids = append(ids, d.MessageId)
	}
	var want []string
	for i := 20; i < 40; i++ {
		want = append(want, fmt.Sprintf("ev-%d-0", i))
	}
	assert.ElementsMatch(t, want, ids)
	quiet(t, deliveries)
	assert.NotEqual(t, before, confirmedFlush(t))
}

// Two relays on one slot: one holds it, the other waits; stopped, the holder hands over, and every
// message is published exactly once.
func TestTwoRelaysPublishEachMessageOnce(t *testing.T) {
	c, deliveries := bound(t, "item.two")
	pub := mq.NewPublisher(c)
	defer pub.Close()
	m1, m2 := NewMetrics(slot), NewMetrics(slot)
	stop1 := run(t, Relay{Publisher: pub, Metrics: m1, Name: "one"})
	require.Eventually(t, func() bool { return testutil.ToFloat64(m1.holding) == 1 }, 10*time.Second, 10*time.Millisecond)
	run(t, Relay{Publisher: pub, Metrics: m2, Name: "two"})

	const n = 400
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				assert.NoError(t, change(ctx, fmt.Sprint(i), i, false, "item.two"))
				if i == n/2 {
					stop1()
				}
			}
		})
	}
	wg.Wait()
	got := receive(t, deliveries, n)
	seen := map[string]bool{}
	for _, d := range got {
		assert.False(t, seen[d.MessageId], "published twice: %s", d.MessageId)
		seen[d.MessageId] = true
	}
	quiet(t, deliveries)
	assert.Equal(t, 1.0, testutil.ToFloat64(m2.holding), "the second took over")
	assert.Equal(t, float64(n), testutil.ToFloat64(m1.published)+testutil.ToFloat64(m2.published))
}

// Groups: the messages of a batch with one key travel as one message, and a lead's messages keep
// their commit order across keys (updated, status changed, updated again).
func TestGroupsKeepEachOrdersMessagesInCommitOrder(t *testing.T) {
	c, deliveries := bound(t, "item.#")
	pub := mq.NewPublisher(c)
	defer pub.Close()
	ctx := context.Background()
	for i := range 5 {
		require.NoError(t, change(ctx, "a", 100+i, false, "item.updated", "item.status"))
		require.NoError(t, change(ctx, fmt.Sprint(i), 200+i, false, "item.created"))
	}
	run(t, Relay{Publisher: pub, GroupType: "group", BatchSize: 1000, MaxWait: time.Second, Linger: 200 * time.Millisecond})
	var order []string
	for len(order) < 15 {
		d := receive(t, deliveries, 1)[0]
		require.Equal(t, "group", d.Type)
		items, err := mq.SplitGroup(d.Body)
		require.NoError(t, err)
		for range items {
			order = append(order, d.RoutingKey)
		}
		assert.Regexp(t, `^ev-\d+-\d\+\d+$`, d.MessageId)
	}
	var ofA []string
	for _, k := range order {
		if k != "item.created" {
			ofA = append(ofA, k)
		}
	}
	assert.Equal(t, []string{"item.updated", "item.status", "item.updated", "item.status", "item.updated",
		"item.status", "item.updated", "item.status", "item.updated", "item.status"}, ofA)
}

func TestSegmentsCutWhereAnOrderRepeats(t *testing.T) {
	it := func(order, key, id string) item {
		return item{h: header{Exchange: "x", Key: key, ID: id, Order: order}, body: []byte(`1`)}
	}
	r := Relay{GroupType: "g"}
	segs := r.segments([]item{it("1", "c", "a"), it("2", "c", "b"), it("1", "u", "c"), it("3", "c", "d"), it("", "c", "e")})
	require.Len(t, segs, 2)
	assert.Equal(t, "a+2", segs[0][0].h.ID)
	assert.Equal(t, "[1,1]", string(segs[0][0].body))
	require.Len(t, segs[1], 2)
	assert.Equal(t, []string{"c+1", "d+2"}, []string{segs[1][0].h.ID, segs[1][1].h.ID})
}

func TestSlotNamesFitAndStayApart(t *testing.T) {
	assert.Equal(t, "lead_events_cc", SlotName("lead_events", "cc"))
	long := SlotName("lead_events", "cctest_a_very_long_label_that_goes_on_and_on_and_on_12345678")
	other := SlotName("lead_events", "cctest_a_very_long_label_that_goes_on_and_on_and_on_87654321")
	assert.LessOrEqual(t, len(long), 63)
	assert.NotEqual(t, long, other)
	assert.Equal(t, "lead_events_my_db", SlotName("lead_events", "My-DB"))
}

func TestTheSlotCollectorReportsLagAndActivity(t *testing.T) {
	assert.Equal(t, 3, testutil.CollectAndCount(NewSlotCollector(conn, slot)))
	missing := NewSlotCollector(conn, "walrelay_no_such_slot")
	require.NoError(t, testutil.CollectAndCompare(missing, strings.NewReader(`
# HELP walrelay_slot_usable 1 while the slot exists and still has all the WAL it needs (not lost past max_slot_wal_keep_size).
# TYPE walrelay_slot_usable gauge
walrelay_slot_usable{slot="walrelay_no_such_slot"} 0
`)))
}

// A relay that dies after the broker confirmed a batch and before the slot heard of it leaves the
// batch in the slot: the next session publishes it again under the same ids (at least once), and
// nothing is lost.
func TestABatchPublishedButNotConfirmedToTheSlotIsPublishedAgainWithTheSameIDs(t *testing.T) {
	c, deliveries := bound(t, "item.crash")
	pub := mq.NewPublisher(c)
	defer pub.Close()
	ctx := context.Background()
	var once sync.Once
	crash := func() {
		// The first batch only: the server ends the relay's session as a crash would, before the
		// relay could report the batch done.
		once.Do(func() {
			_, err := conn.Exec(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1`, slot)
			assert.NoError(t, err)
			assert.Eventually(t, func() bool {
				var active bool
				return conn.Get(&active, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, slot) == nil && !active
			}, 10*time.Second, 5*time.Millisecond, "the session ends")
		})
	}
	for i := range 10 {
		require.NoError(t, change(ctx, "one", i, false, "item.crash"))
	}
	run(t, Relay{Publisher: pub, published: crash, MaxWait: time.Second, Linger: 100 * time.Millisecond})
	got := receive(t, deliveries, 20)
	count := map[string]int{}
	for _, d := range got {
		count[d.MessageId]++
	}
	for i := range 10 {
		assert.Equal(t, 2, count[fmt.Sprintf("ev-%d-0", i)], "ev-%d-0 published, then again after the crash", i)
	}
	quiet(t, deliveries)
}

// A body goes through the WAL as text byte for byte, whatever it quotes or escapes; one that is
// not UTF-8 text is refused before anything is written.
func TestBodiesArriveByteForByteAndNonTextIsRefused(t *testing.T) {
	c, deliveries := bound(t, "item.texted")
	ctx := context.Background()
	bodies := []string{`{"s":"a \"quoted\" \\ backslash, {braces}, comma"}`, `{"s":"é ☎ 𝄞","t":"tab\there"}`, `NULL`, `""`}
	require.NoError(t, db.InTx(ctx, conn, func(tx *sqlx.Tx) error {
		var msgs []Message
		for i, b := range bodies {
			msgs = append(msgs, Message{Exchange: exchange, Key: "item.texted", Order: "texted",
				Msg: mq.Message{ID: fmt.Sprintf("text-%d", i), Type: "item.texted", Body: []byte(b)}})
		}
		return Emit(ctx, tx, prefix, msgs...)
	}))
	for _, bad := range [][]byte{{0xff, 0xfe}, []byte("a\x00b")} {
		err := db.InTx(ctx, conn, func(tx *sqlx.Tx) error {
			return Emit(ctx, tx, prefix, Message{Exchange: exchange, Key: "item.texted", Order: "texted",
				Msg: mq.Message{ID: "bad", Type: "item.texted", Body: bad}})
		})
		require.ErrorContains(t, err, "not UTF-8 text without NUL")
	}
	pub := mq.NewPublisher(c)
	defer pub.Close()
	run(t, Relay{Publisher: pub})
	got := receive(t, deliveries, len(bodies))
	for i, d := range got {
		assert.Equal(t, bodies[i], string(d.Body))
	}
	quiet(t, deliveries)
}
