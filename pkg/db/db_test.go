package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"ccplatform/pkg/dbtest"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "pkg_db", func(u string) int {
		testURL = u
		return m.Run()
	})
}

func open(t *testing.T, schema string, maxConns int) *sqlx.DB {
	t.Helper()
	conn, err := Open(context.Background(), testURL, schema, maxConns)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func sqlFile(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestOpenSetsSearchPath(t *testing.T) {
	ctx := ctxT(t)
	conn := open(t, "alpha", 4)
	require.NoError(t, Migrate(ctx, conn, "alpha"))

	var schema string
	require.NoError(t, conn.GetContext(ctx, &schema, `SELECT current_schema()`))
	assert.Equal(t, "alpha", schema)

	_, err := conn.ExecContext(ctx, `CREATE TABLE widgets (id int)`)
	require.NoError(t, err)
	var where string
	require.NoError(t, conn.GetContext(ctx, &where, `SELECT table_schema FROM information_schema.tables WHERE table_name = 'widgets'`))
	assert.Equal(t, "alpha", where)

	// Another schema's connection does not see the table unqualified.
	other := open(t, "beta", 2)
	require.NoError(t, Migrate(ctx, other, "beta"))
	_, err = other.ExecContext(ctx, `SELECT * FROM widgets`)
	require.Error(t, err)
	var pe *pq.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "42P01", string(pe.Code), "undefined_table")

	// Every pooled connection has the path, not only the first.
	var wg sync.WaitGroup
	tx := make([]*sql.Conn, 4)
	for i := range tx {
		c, err := conn.Conn(ctx)
		require.NoError(t, err)
		tx[i] = c
	}
	for _, c := range tx {
		wg.Add(1)
		go func(c *sql.Conn) {
			defer wg.Done()
			var s string
			assert.NoError(t, c.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&s))
			assert.Equal(t, "alpha", s)
		}(c)
	}
	wg.Wait()
	for _, c := range tx {
		_ = c.Close()
	}
}

func TestOpenKeepsURLParameters(t *testing.T) {
	ctx := ctxT(t)
	u, err := url.Parse(testURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", "cc-test")
	u.RawQuery = q.Encode()
	conn, err := Open(ctx, u.String(), "gamma", 1)
	require.NoError(t, err)
	defer conn.Close()
	var app string
	require.NoError(t, conn.GetContext(ctx, &app, `SHOW application_name`))
	assert.Equal(t, "cc-test", app)
	var path string
	require.NoError(t, conn.GetContext(ctx, &path, `SHOW search_path`))
	assert.Equal(t, "gamma", path)
}

func TestOpenKeyValueDSN(t *testing.T) {
	ctx := ctxT(t)
	u, err := url.Parse(testURL)
	require.NoError(t, err)
	pw, _ := u.User.Password()
	dsn := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable",
		u.Hostname(), u.Port(), u.User.Username(), pw, u.Path[1:])
	conn, err := Open(ctx, dsn, "delta", 1)
	require.NoError(t, err)
	defer conn.Close()
	var path string
	require.NoError(t, conn.GetContext(ctx, &path, `SHOW search_path`))
	assert.Equal(t, "delta", path)
}

func TestOpenFailsFast(t *testing.T) {
	ctx := ctxT(t)
	_, err := Open(ctx, "postgres://cc:cc@127.0.0.1:1/cc?sslmode=disable&connect_timeout=2", "x", 1)
	assert.Error(t, err)
	_, err = Open(ctx, "postgres://%zz", "x", 1)
	assert.Error(t, err)
}

var firstTwo = fstest.MapFS{
	"00001_create.sql": sqlFile(`-- +goose Up
CREATE TABLE things (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE runs (migration int NOT NULL);
INSERT INTO runs VALUES (1);
-- +goose Down
DROP TABLE things;
DROP TABLE runs;
`),
	"00002_seed.sql": sqlFile(`-- +goose Up
INSERT INTO things (name) VALUES ('first');
INSERT INTO runs VALUES (2);
-- +goose Down
DELETE FROM things;
`),
}

func countRuns(t *testing.T, conn *sqlx.DB) map[int]int {
	t.Helper()
	var rows []struct {
		Migration int `db:"migration"`
		N         int `db:"n"`
	}
	require.NoError(t, conn.Select(&rows, `SELECT migration, count(*) AS n FROM runs GROUP BY migration`))
	out := map[int]int{}
	for _, r := range rows {
		out[r.Migration] = r.N
	}
	return out
}

func TestMigrateAppliesAndIsIdempotent(t *testing.T) {
	ctx := ctxT(t)
	conn := open(t, "mig_once", 4)
	set := Migrations{Table: "app_version", FS: firstTwo}
	require.NoError(t, Migrate(ctx, conn, "mig_once", set))
	require.NoError(t, Migrate(ctx, conn, "mig_once", set))
	assert.Equal(t, map[int]int{1: 1, 2: 1}, countRuns(t, conn))

	var tables []string
	require.NoError(t, conn.Select(&tables, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'mig_once' ORDER BY 1`))
	assert.Equal(t, []string{"app_version", "runs", "things"}, tables)

	// A later release adds a migration: only that one runs.
	next := fstest.MapFS{"00003_more.sql": sqlFile("-- +goose Up\nINSERT INTO runs VALUES (3);\n")}
	for k, v := range firstTwo {
		next[k] = v
	}
	require.NoError(t, Migrate(ctx, conn, "mig_once", Migrations{Table: "app_version", FS: next}))
	assert.Equal(t, map[int]int{1: 1, 2: 1, 3: 1}, countRuns(t, conn))
}

func TestMigrateSeveralSetsWithTheirOwnTables(t *testing.T) {
	ctx := ctxT(t)
	conn := open(t, "mig_sets", 2)
	other := fstest.MapFS{"00001_other.sql": sqlFile("-- +goose Up\nCREATE TABLE others (id int);\n")}
	require.NoError(t, Migrate(ctx, conn, "mig_sets",
		Migrations{Table: "app_version", FS: firstTwo},
		Migrations{Table: "other_version", FS: other}))
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM other_version WHERE version_id = 1`))
	assert.Equal(t, 1, n)
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM app_version WHERE version_id > 0`))
	assert.Equal(t, 2, n)
}

func TestMigrateConcurrently(t *testing.T) {
	ctx := ctxT(t)
	const replicas = 8
	conns := make([]*sqlx.DB, replicas)
	for i := range conns {
		conns[i] = open(t, "mig_race", 2)
	}
	slow := fstest.MapFS{
		"00003_slow.sql": sqlFile("-- +goose Up\nSELECT pg_sleep(0.2);\nINSERT INTO runs VALUES (3);\n"),
	}
	for k, v := range firstTwo {
		slow[k] = v
	}
	set := Migrations{Table: "app_version", FS: slow}
	start := make(chan struct{})
	errs := make(chan error, replicas)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func(c *sqlx.DB) {
			defer wg.Done()
			<-start
			errs <- Migrate(ctx, c, "mig_race", set)
		}(c)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, map[int]int{1: 1, 2: 1, 3: 1}, countRuns(t, conns[0]))
	var names []string
	require.NoError(t, conns[0].Select(&names, `SELECT name FROM things`))
	assert.Equal(t, []string{"first"}, names)
}

func TestMigrateWithOneConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := open(t, "mig_single", 1)
	require.NoError(t, Migrate(ctx, conn, "mig_single", Migrations{Table: "app_version", FS: firstTwo}),
		"a pool of one connection must not deadlock")
	assert.Equal(t, map[int]int{1: 1, 2: 1}, countRuns(t, conn))
}

func TestMigrateFailureReleasesTheLock(t *testing.T) {
	ctx := ctxT(t)
	conn := open(t, "mig_fail", 2)
	broken := fstest.MapFS{"00001_bad.sql": sqlFile("-- +goose Up\nCREATE TABLE ok (id int);\nSELECT * FROM missing_table;\n")}
	err := Migrate(ctx, conn, "mig_fail", Migrations{Table: "app_version", FS: broken})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mig_fail")

	// The failed migration ran in a transaction: nothing of it is left.
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'mig_fail' AND table_name = 'ok'`))
	assert.Zero(t, n)

	// The lock is free again: another replica (another pool) migrates at once.
	other := open(t, "mig_fail", 1)
	fixed := fstest.MapFS{"00001_bad.sql": sqlFile("-- +goose Up\nCREATE TABLE ok (id int);\n")}
	ctx2, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, Migrate(ctx2, other, "mig_fail", Migrations{Table: "app_version", FS: fixed}))
	var locks int
	require.NoError(t, conn.Get(&locks, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`))
	assert.Zero(t, locks, "no advisory lock is left behind")
}

func TestMigrateHonoursContext(t *testing.T) {
	conn := open(t, "mig_ctx", 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Error(t, Migrate(ctx, conn, "mig_ctx", Migrations{Table: "app_version", FS: firstTwo}))
}

func txTable(t *testing.T) *sqlx.DB {
	t.Helper()
	ctx := ctxT(t)
	conn := open(t, "txs", 2)
	require.NoError(t, Migrate(ctx, conn, "txs", Migrations{Table: "app_version", FS: fstest.MapFS{
		"00001_tx.sql": sqlFile(`-- +goose Up
CREATE TABLE codes (
    id   int  NOT NULL,
    code text NOT NULL,
    CONSTRAINT codes_code_key UNIQUE (code) DEFERRABLE INITIALLY DEFERRED
);
CREATE TABLE plain (code text CONSTRAINT plain_code_key UNIQUE);
`),
	}}))
	_, err := conn.Exec(`TRUNCATE codes, plain`)
	require.NoError(t, err)
	return conn
}

func count(t *testing.T, conn *sqlx.DB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM `+table))
	return n
}

func TestInTxCommits(t *testing.T) {
	conn := txTable(t)
	err := InTx(ctxT(t), conn, func(tx *sqlx.Tx) error {
		_, err := tx.Exec(`INSERT INTO codes VALUES (1, 'a'), (2, 'b')`)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, 2, count(t, conn, "codes"))
}

func TestInTxRollsBackOnError(t *testing.T) {
	conn := txTable(t)
	boom := errors.New("boom")
	err := InTx(ctxT(t), conn, func(tx *sqlx.Tx) error {
		if _, err := tx.Exec(`INSERT INTO codes VALUES (1, 'a')`); err != nil {
			return err
		}
		return boom
	})
	assert.Same(t, boom, err, "fn's error comes back unchanged")
	assert.Zero(t, count(t, conn, "codes"))
}

func TestInTxReportsAFailedCommit(t *testing.T) {
	conn := txTable(t)
	err := InTx(ctxT(t), conn, func(tx *sqlx.Tx) error {
		// Both inserts succeed: the deferred unique constraint is only checked at COMMIT.
		if _, err := tx.Exec(`INSERT INTO codes VALUES (1, 'same')`); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO codes VALUES (2, 'same')`)
		return err
	})
	require.Error(t, err, "a failed commit must be reported")
	assert.Contains(t, err.Error(), "commit")
	constraint, ok := UniqueViolation(err)
	assert.True(t, ok)
	assert.Equal(t, "codes_code_key", constraint)
	assert.Zero(t, count(t, conn, "codes"), "nothing is stored")
}

func TestInTxReportsASwallowedStatementError(t *testing.T) {
	conn := txTable(t)
	err := InTx(ctxT(t), conn, func(tx *sqlx.Tx) error {
		_, _ = tx.Exec(`INSERT INTO codes VALUES (1, 'a')`)
		_, _ = tx.Exec(`INSERT INTO nowhere VALUES (1)`) // error ignored by a careless fn
		return nil
	})
	require.Error(t, err, "COMMIT of an aborted transaction rolls back and must not pass for success")
	assert.Zero(t, count(t, conn, "codes"))
}

func TestInTxRollsBackOnPanic(t *testing.T) {
	ctx := ctxT(t)
	conn := open(t, "txs", 1)
	_ = txTable(t)
	assert.PanicsWithValue(t, "boom", func() {
		_ = InTx(ctx, conn, func(tx *sqlx.Tx) error {
			_, err := tx.Exec(`INSERT INTO codes VALUES (1, 'p')`)
			require.NoError(t, err)
			panic("boom")
		})
	})
	// The only connection of the pool was given back and holds no open transaction.
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var n int
	require.NoError(t, conn.GetContext(qctx, &n, `SELECT count(*) FROM codes`))
	assert.Zero(t, n)
}

func TestInTxBeginFails(t *testing.T) {
	conn := open(t, "txs", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := InTx(ctx, conn, func(*sqlx.Tx) error { called = true; return nil })
	assert.Error(t, err)
	assert.False(t, called)
}

func TestUniqueViolation(t *testing.T) {
	conn := txTable(t)
	_, err := conn.Exec(`INSERT INTO plain VALUES ('x')`)
	require.NoError(t, err)
	_, err = conn.Exec(`INSERT INTO plain VALUES ('x')`)
	require.Error(t, err)
	constraint, ok := UniqueViolation(fmt.Errorf("create: %w", err))
	assert.True(t, ok)
	assert.Equal(t, "plain_code_key", constraint)

	_, err = conn.Exec(`INSERT INTO codes VALUES (NULL, 'n')`) // not-null violation
	require.Error(t, err)
	_, ok = UniqueViolation(err)
	assert.False(t, ok)
	_, ok = UniqueViolation(errors.New("duplicate"))
	assert.False(t, ok)
	_, ok = UniqueViolation(nil)
	assert.False(t, ok)
}

func TestIsNoRows(t *testing.T) {
	conn := txTable(t)
	var code string
	err := conn.Get(&code, `SELECT code FROM codes WHERE id = -1`)
	assert.True(t, IsNoRows(err))
	assert.True(t, IsNoRows(fmt.Errorf("load: %w", err)))
	assert.False(t, IsNoRows(errors.New("x")))
	assert.False(t, IsNoRows(nil))
}

func TestOneRow(t *testing.T) {
	missing := errors.New("code 7 does not exist")
	assert.NoError(t, OneRow(nil, missing, "read code %d", 7))
	assert.Equal(t, missing, OneRow(fmt.Errorf("scan: %w", sql.ErrNoRows), missing, "read code %d", 7))
	down := errors.New("connection refused")
	err := OneRow(down, missing, "read code %d", 7)
	assert.ErrorIs(t, err, down)
	assert.EqualError(t, err, "read code 7: connection refused")
}

// Schema.Open hands out a pool only on a migrated schema, its own set first.
func TestSchemaOpenMigrates(t *testing.T) {
	ctx := ctxT(t)
	s := Schema{Name: "svc_schema", Sets: []Migrations{Embedded(firstTwo)}}
	conn, err := s.Open(ctx, testURL, 2)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	assert.Equal(t, map[int]int{1: 1, 2: 1}, countRuns(t, conn))
	var n int
	require.NoError(t, conn.Get(&n, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`))
	assert.Equal(t, 2, n, "recorded in goose's own table inside the schema")

	broken := Schema{Name: "svc_broken", Sets: []Migrations{Embedded(fstest.MapFS{"00001_bad.sql": sqlFile("-- +goose Up\nCREATE TABLE;\n")})}}
	_, err = broken.Open(ctx, testURL, 2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migrate svc_broken")
}

func TestInTxRetryingRunsAgainAfterAConflictAndNotAfterOtherErrors(t *testing.T) {
	conn := txTable(t)
	runs := 0
	err := InTxRetrying(ctxT(t), conn, func(tx *sqlx.Tx) error {
		runs++
		if _, err := tx.Exec(`INSERT INTO codes VALUES ($1, 'a')`, runs); err != nil {
			return err
		}
		if runs == 1 {
			// What PostgreSQL answers the victim of a deadlock: the whole transaction is gone.
			return fmt.Errorf("record: %w", &pq.Error{Code: "40P01", Message: "deadlock detected"})
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, runs)
	assert.Equal(t, 1, count(t, conn, "codes"), "the first run was rolled back, the second committed")

	runs = 0
	boom := errors.New("boom")
	err = InTxRetrying(ctxT(t), conn, func(tx *sqlx.Tx) error { runs++; return boom })
	assert.Same(t, boom, err)
	assert.Equal(t, 1, runs, "only a conflict runs again")

	runs = 0
	err = InTxRetrying(ctxT(t), conn, func(tx *sqlx.Tx) error {
		runs++
		return &pq.Error{Code: "40001", Message: "could not serialize access"}
	})
	assert.Equal(t, conflictTries, runs, "a conflict that keeps coming back is handed up")
	assert.True(t, conflict(err))
}
