package walrelay

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mq"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// A slot the server invalidated (it fell past max_slot_wal_keep_size) can never be read again, and
// every message emitted meanwhile is lost with it. The relay drops it and makes it anew, so the
// loss ends there, and counts it: the count is what the operator's alert reads. The cluster is the
// test's own, with WAL segments of 1 MB and a 1 MB cap, so that a few segment switches and a
// checkpoint invalidate the slot without touching the machine's cluster.
func TestAnInvalidatedSlotIsMadeAnewAndRelaysAgain(t *testing.T) {
	c := dbtest.StartCluster(t, dbtest.ClusterOptions{InitDB: []string{"--wal-segsize=1"},
		Settings: []string{"max_slot_wal_keep_size=1MB", "min_wal_size=2MB", "max_wal_size=4MB"}})
	ctx := context.Background()
	pg, err := sqlx.Open("postgres", c.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	slot := SlotName(prefix, "postgres")
	_, err = EnsureSlot(ctx, pg, slot, publication)
	require.NoError(t, err)

	_, deliveries := bound(t, "invalidated")
	emit := func(id string) {
		t.Helper()
		require.NoError(t, db.InTx(ctx, pg, func(tx *sqlx.Tx) error {
			return Emit(ctx, tx, prefix, Message{Exchange: exchange, Key: "invalidated",
				Msg: mq.Message{ID: id, Type: "invalidated", Body: []byte(`{}`)}})
		}))
	}
	broker := mq.Dial(vhostURL, t.Name()+"-relay", zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), mq.EventExchange(exchange))
	t.Cleanup(broker.Close)
	pub := mq.NewPublisher(broker)
	t.Cleanup(pub.Close)
	metrics := NewMetrics(slot)
	relay := Relay{DB: pg, URL: c.URL(), Slot: slot, Publisher: pub, Metrics: metrics}

	stop := run(t, relay)
	emit("before")
	assert.Equal(t, "before", receive(t, deliveries, 1)[0].MessageId)
	stop()

	// Nobody reads the slot while the WAL moves on by more than the cap.
	status := func() string {
		var s string
		require.NoError(t, pg.Get(&s, `SELECT coalesce(wal_status, '') FROM pg_replication_slots WHERE slot_name = $1`, slot))
		return s
	}
	for i := 0; i < 20 && status() != "lost"; i++ {
		_, err := pg.Exec(`CREATE TABLE filler (); DROP TABLE filler; SELECT pg_switch_wal(); CHECKPOINT`)
		require.NoError(t, err)
	}
	require.Equal(t, "lost", status(), "the slot is invalidated")
	assert.Zero(t, testutil.ToFloat64(metrics.recreated))

	run(t, relay)
	require.Eventually(t, func() bool { s := status(); return s == "reserved" || s == "extended" }, 20*time.Second, 20*time.Millisecond,
		"the relay makes the slot anew")
	assert.Equal(t, 1.0, testutil.ToFloat64(metrics.recreated), "the loss is counted once")
	emit("after")
	assert.Equal(t, "after", receive(t, deliveries, 1)[0].MessageId, "messages emitted after are relayed")
}
