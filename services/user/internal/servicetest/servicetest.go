// Package servicetest opens the user service's schema for a test: on the database of the test
// package's own (pkg/dbtest.Main), migrated, with the tables the test needs emptied. It is
// imported by tests only.
package servicetest

import (
	"context"
	"strings"
	"testing"

	"ccplatform/services/user/internal/migrations"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"
)

// DB is a connection to the migrated user schema at url, closed when the test ends, with every
// table of truncate emptied (identities restarted, dependent rows dropped).
func DB(t *testing.T, url string, truncate ...string) *sqlx.DB {
	t.Helper()
	ctx := context.Background()
	conn, err := migrations.Schema.Open(ctx, url, 8)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	if len(truncate) > 0 {
		_, err = conn.ExecContext(ctx, `TRUNCATE `+strings.Join(truncate, ", ")+` RESTART IDENTITY CASCADE`)
		require.NoError(t, err)
	}
	return conn
}
