package dbtest

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var mainURL string

func TestMain(m *testing.M) {
	Main(m, "pkg_dbtest", func(u string) int {
		mainURL = u
		return m.Run()
	})
}

func dbName(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return strings.TrimPrefix(u.Path, "/")
}

func exists(t *testing.T, name string) bool {
	t.Helper()
	admin, err := sql.Open("postgres", BaseURL())
	require.NoError(t, err)
	defer admin.Close()
	var n int
	require.NoError(t, admin.QueryRow(`SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n))
	return n == 1
}

func TestMainGivesTheRunADatabase(t *testing.T) {
	name := dbName(t, mainURL)
	assert.True(t, strings.HasPrefix(name, "cctest_pkg_dbtest_"), name)
	assert.True(t, exists(t, name))
}

func TestCreateMakesAUsableDatabaseAndDropRemovesIt(t *testing.T) {
	u, drop, err := Create("Create Me!")
	require.NoError(t, err)
	name := dbName(t, u)
	assert.Regexp(t, `^cctest_create_me__[0-9a-f]{8}$`, name)
	assert.NotEqual(t, dbName(t, BaseURL()), name)

	conn, err := sql.Open("postgres", u)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = conn.ExecContext(ctx, `CREATE TABLE t (id int); INSERT INTO t VALUES (1)`)
	require.NoError(t, err)
	var current string
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT current_database()`).Scan(&current))
	assert.Equal(t, name, current)
	assert.True(t, exists(t, name))

	// Drop works even with a connection still open (a test that forgot to close).
	require.NoError(t, drop())
	assert.False(t, exists(t, name))
	_ = conn.Close()
}

func TestExistingReadsAKeptDatabaseAndDropsIt(t *testing.T) {
	u, _, err := Create("kept")
	require.NoError(t, err)
	name := dbName(t, u)
	conn, err := sql.Open("postgres", u)
	require.NoError(t, err)
	_, err = conn.Exec(`CREATE TABLE t (id int); INSERT INTO t VALUES (7)`)
	require.NoError(t, err)
	require.NoError(t, conn.Close())

	again, drop, err := Existing(name)
	require.NoError(t, err)
	assert.Equal(t, u, again)
	conn, err = sql.Open("postgres", again)
	require.NoError(t, err)
	var id int
	require.NoError(t, conn.QueryRow(`SELECT id FROM t`).Scan(&id))
	assert.Equal(t, 7, id, "the kept database's rows are still there")
	require.NoError(t, drop())
	assert.False(t, exists(t, name))
	_ = conn.Close()

	_, _, err = Existing(name)
	require.ErrorContains(t, err, "no database "+name)
}

func TestLongLabelsKeepTheRandomPart(t *testing.T) {
	label := strings.Repeat("very_long_label_", 8)
	u1, drop1, err := Create(label)
	require.NoError(t, err)
	defer func() { assert.NoError(t, drop1()) }()
	u2, drop2, err := Create(label)
	require.NoError(t, err)
	defer func() { assert.NoError(t, drop2()) }()
	n1, n2 := dbName(t, u1), dbName(t, u2)
	assert.LessOrEqual(t, len(n1), 63)
	assert.NotEqual(t, n1, n2)
	assert.Regexp(t, `_[0-9a-f]{8}$`, n1)
}

func TestBaseURL(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	assert.Equal(t, DefaultURL, BaseURL())
	t.Setenv("DATABASE_URL", "postgres://x@h/db")
	assert.Equal(t, "postgres://x@h/db", BaseURL())
}

func TestCreateReportsAnUnreachableServer(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://cc:cc@127.0.0.1:1/cc?sslmode=disable&connect_timeout=2")
	_, _, err := Create("down")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scripts/deps.sh")
}

// A database with a logical slot that a relay reads (a service that relays through the WAL) is
// dropped with it.
func TestDropRemovesADatabaseWithALogicalSlot(t *testing.T) {
	u, drop, err := Create("slot")
	require.NoError(t, err)
	name := dbName(t, u)
	conn, err := sql.Open("postgres", u)
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	slot := "dbtest_" + strings.TrimPrefix(name, "cctest_")
	_, err = conn.ExecContext(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `CREATE PUBLICATION p`)
	require.NoError(t, err)
	repl, err := pgconn.Connect(ctx, u+"&replication=database")
	require.NoError(t, err)
	defer repl.Close(context.Background())
	require.NoError(t, pglogrepl.StartReplication(ctx, repl, slot, 0, pglogrepl.StartReplicationOptions{
		Mode: pglogrepl.LogicalReplication, PluginArgs: []string{"proto_version '1'", "publication_names 'p'"}}))

	require.NoError(t, drop())
	assert.False(t, exists(t, name))
	admin, err := sql.Open("postgres", BaseURL())
	require.NoError(t, err)
	defer admin.Close()
	var n int
	require.NoError(t, admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&n))
	assert.Zero(t, n)
}
