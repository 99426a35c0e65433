package migrations_test

import (
	"context"
	"testing"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/telephony"
	"ccplatform/services/call/internal/migrations"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

var dbURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "call_migrations", func(url string) int {
		dbURL = url
		return m.Run()
	})
}

func TestUpFromManyReplicasAndSeeded(t *testing.T) {
	ctx := context.Background()
	conn, err := db.Open(ctx, dbURL, migrations.Schema.Name, 8)
	require.NoError(t, err)
	defer conn.Close()

	// The API and the consumer, several replicas each, start together.
	var g errgroup.Group
	for range 4 {
		g.Go(func() error { return migrations.Schema.Up(ctx, conn) })
	}
	require.NoError(t, g.Wait())
	require.NoError(t, migrations.Schema.Up(ctx, conn))

	var codes []string
	require.NoError(t, conn.Select(&codes, `SELECT code FROM call_statuses ORDER BY id`))
	assert.Equal(t, []string{telephony.StatusAnswered, telephony.StatusNoAnswer, telephony.StatusBusy,
		telephony.StatusFailed, telephony.StatusVoicemail, telephony.StatusRejected, telephony.StatusCancelled,
		telephony.StatusInvalidNumber, telephony.StatusAbandoned}, codes,
		"every status code the platform sends has a catalog entry")

	var schema string
	require.NoError(t, conn.Get(&schema, `SELECT table_schema FROM information_schema.tables WHERE table_name = 'calls'`))
	assert.Equal(t, "calls", schema)
	var indexes []string
	require.NoError(t, conn.Select(&indexes, `SELECT indexname FROM pg_indexes WHERE schemaname = 'calls' AND tablename = 'calls' ORDER BY 1`))
	assert.Subset(t, indexes, []string{"calls_platform_call_id_key", "calls_lead_created_idx", "calls_order_created_idx",
		"calls_user_created_idx", "calls_status_created_idx"})
}
