package migrations

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"

	"ccplatform/pkg/customfield"
	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/outbox"
	"ccplatform/pkg/walrelay"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// before00012 is the schema as the previous version left it: the service's migrations up to 00011
// and the outbox.
func before00012(t *testing.T) db.Schema {
	t.Helper()
	old := fstest.MapFS{}
	entries, err := fs.ReadDir(files, ".")
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() >= "00012" {
			continue
		}
		b, err := fs.ReadFile(files, e.Name())
		require.NoError(t, err)
		old[e.Name()] = &fstest.MapFile{Data: b}
	}
	return db.Schema{Name: Schema.Name, Sets: []db.Migrations{db.Embedded(old), customfield.Migrations(),
		idempotency.Migrations(), outbox.Migrations()}}
}

// fresh is a database of the test's own with the previous version's schema, and its URL.
func fresh(t *testing.T) (*sqlx.DB, string) {
	t.Helper()
	u, drop, err := dbtest.Create("lead_migrations")
	require.NoError(t, err)
	t.Cleanup(func() { _ = drop() })
	conn, err := before00012(t).Open(context.Background(), u, 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn, u
}

const (
	prefix      = "lead_events"
	publication = "lead_events"
)

// The outbox goes by migration 00012 once nothing is left in it: its unpublished rows become the
// same messages in the WAL, in id order, for the slot; published rows are not sent again.
func TestTheOutboxsLastRowsMoveIntoTheWALAndTheTableGoes(t *testing.T) {
	ctx := context.Background()
	conn, u := fresh(t)
	_, err := conn.Exec(`INSERT INTO outbox (exchange, routing_key, message_id, type, body, request_id, published_at) VALUES
		('events', 'lead.created', 'e1', 'lead.created', '{"eventId": "e1", "data": {"id": 11}}', 'r1', NULL),
		('events', 'lead.updated', 'e0', 'lead.updated', '{"eventId": "e0", "data": {"id": 10}}', NULL, now()),
		('events', 'lead.job.failed', 'e2', 'lead.job.failed', '{"eventId":"e2"}', NULL, NULL)`)
	require.NoError(t, err)
	name, err := walrelay.DatabaseOf(u)
	require.NoError(t, err)
	slot := walrelay.SlotName(prefix, name)
	_, err = walrelay.EnsureSlot(ctx, conn, slot, publication)
	require.NoError(t, err)

	require.NoError(t, Schema.Up(ctx, conn))
	require.NoError(t, Schema.Up(ctx, conn), "a second replica finds it done")
	var left int
	require.NoError(t, conn.Get(&left, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'leads' AND table_name IN ('outbox', 'outbox_version')`))
	assert.Zero(t, left)

	msgs, err := walrelay.Peek(ctx, conn, slot, publication, prefix)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, walrelay.Message{Exchange: "events", Key: "lead.created", Order: "11"}, walrelay.Message{
		Exchange: msgs[0].Exchange, Key: msgs[0].Key, Order: msgs[0].Order})
	assert.Equal(t, []string{"e1", "lead.created", `{"eventId": "e1", "data": {"id": 11}}`},
		[]string{msgs[0].Msg.ID, msgs[0].Msg.Type, string(msgs[0].Msg.Body)}, "the body as it was stored")
	assert.Equal(t, []string{"e2", "lead.job.failed", "", `{"eventId":"e2"}`},
		[]string{msgs[1].Msg.ID, msgs[1].Key, msgs[1].Order, string(msgs[1].Msg.Body)})
}

// Without a slot the moved rows would be lost: the migration refuses and the outbox stays.
func TestTheOutboxStaysWhileItHoldsRowsAndNoSlotTakesThem(t *testing.T) {
	ctx := context.Background()
	conn, _ := fresh(t)
	_, err := conn.Exec(`INSERT INTO outbox (exchange, routing_key, message_id, type, body) VALUES ('events', 'lead.created', 'e1', 'lead.created', '{}')`)
	require.NoError(t, err)
	err = Schema.Up(ctx, conn)
	require.ErrorContains(t, err, "the outbox still holds 1 lead events")
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM outbox`))
	assert.Equal(t, 1, n)

	_, err = conn.Exec(`DELETE FROM outbox`)
	require.NoError(t, err)
	require.NoError(t, Schema.Up(ctx, conn), "an empty outbox goes without a slot")
}
