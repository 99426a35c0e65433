package migrations

import (
	"context"
	"fmt"
	"testing"

	"ccplatform/pkg/dbtest"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A session that claimed its first leads while leads was nearly empty keeps finding a key's newest
// lead by index once the table is large (00014): the claims of five new leads then read none of
// its rows sequentially, where the plan made on the small table read the whole table for each. No
// ANALYZE runs while it grows, as none had in the drains that met it.
func TestClaimsPlannedOnASmallTableStayOnTheIndexAsItGrows(t *testing.T) {
	ctx := context.Background()
	u, drop, err := dbtest.Create("lead_claim_plan")
	require.NoError(t, err)
	t.Cleanup(func() { _ = drop() })
	conn, err := Schema.Open(ctx, u, 1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	conn.SetMaxOpenConns(1) // one session: its plans are what is checked
	conn.SetMaxIdleConns(1)

	claim := func(phones ...string) {
		t.Helper()
		locks, orders := make([]int64, len(phones)), make([]int64, len(phones))
		for i := range phones {
			locks[i], orders[i] = int64(1000+i), 7
		}
		rows, err := conn.QueryContext(ctx, `SELECT * FROM claim_lead_ids($1, $2, $3)`,
			pq.Array(locks), pq.Array(orders), pq.Array(phones))
		require.NoError(t, err)
		require.NoError(t, rows.Close())
	}
	grow := func(from, to int) {
		t.Helper()
		_, err := conn.ExecContext(ctx, `INSERT INTO leads (order_id, order_code, phone, name, source_comment, status_id, lead_type, create_method)
			SELECT 7, 'o7', '+7495' || lpad(g::text, 7, '0'), 'Grown', '', 1, 'straight', 'api_v2' FROM generate_series($1::int, $2::int) g`, from, to)
		require.NoError(t, err)
	}
	// A deployment's first leads, counted by autovacuum's first ANALYZE (after 50 rows).
	grow(1, 60)
	_, err = conn.ExecContext(ctx, `ANALYZE leads`)
	require.NoError(t, err)
	var first []string
	for i := range 12 {
		first = append(first, fmt.Sprintf("+7916000%04d", i))
	}
	claim(first...) // plpgsql keeps its plans from here on

	const size = 20_000
	grow(61, size)

	// A backend hands its counts over once it is idle between statements.
	seqRead := func() int64 {
		t.Helper()
		_, err := conn.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`)
		require.NoError(t, err)
		var n int64
		require.NoError(t, conn.GetContext(ctx, &n, `SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relid = 'leads'::regclass`))
		return n
	}
	before := seqRead()
	claim("+79160010001", "+79160010002", "+79160010003", "+79160010004", "+79160010005")
	assert.Less(t, seqRead()-before, int64(size), "the claims read leads' rows sequentially")
}
