package migrations_test

import (
	"context"
	"testing"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/services/order/internal/migrations"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var dbURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "order_migrations", func(url string) int {
		dbURL = url
		return m.Run()
	})
}

func TestUpTwiceAndSeeded(t *testing.T) {
	ctx := context.Background()
	conn, err := db.Open(ctx, dbURL, migrations.Schema.Name, 4)
	require.NoError(t, err)
	defer conn.Close()

	// A second start (or a second replica) finds everything done.
	require.NoError(t, migrations.Schema.Up(ctx, conn))
	require.NoError(t, migrations.Schema.Up(ctx, conn))

	var langs []string
	require.NoError(t, conn.Select(&langs, `SELECT code FROM languages ORDER BY code`))
	assert.Equal(t, []string{"gb", "ru"}, langs)

	var schema string
	require.NoError(t, conn.Get(&schema, `SELECT table_schema FROM information_schema.tables WHERE table_name = 'orders'`))
	assert.Equal(t, "orders", schema)
	var idem int
	require.NoError(t, conn.Get(&idem, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'orders' AND table_name = 'idempotency_keys'`))
	assert.Equal(t, 1, idem)
	var outbox int
	require.NoError(t, conn.Get(&outbox, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'orders' AND table_name = 'outbox'`))
	assert.Equal(t, 1, outbox)
}
