// Package db opens a service's PostgreSQL schema, migrates it, and runs transactions.
package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
)

// Open connects to the database at rawURL with every connection's search_path set to schema, so a
// service's SQL names its own tables unqualified and never sees another service's.
func Open(ctx context.Context, rawURL, schema string, maxConns int) (*sqlx.DB, error) {
	dsn, err := withSearchPath(rawURL, schema)
	if err != nil {
		return nil, err
	}
	pc, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	conn := sqlx.NewDb(sql.OpenDB(startupEOF{pc}), "postgres")
	if maxConns <= 0 {
		maxConns = 16
	}
	conn.SetMaxOpenConns(maxConns)
	conn.SetMaxIdleConns(maxConns)
	conn.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.PingContext(pctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	return conn, nil
}

// startupEOF makes a connection closed during its startup a bad connection. A proxy in front of the
// database (HAProxy while no node is writable, in a failover) accepts the connection and closes it
// before the server's first word, and the driver reports that as a bare io.EOF: database/sql would
// not try another connection, and the caller's answer would be a 500 for what is an unreachable
// database (503, apperr.Unreachable).
type startupEOF struct{ driver.Connector }

func (c startupEOF) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("connect: the connection was closed during startup: %w", driver.ErrBadConn)
	}
	return conn, err
}

// Migrations is one ordered set of goose SQL migrations and the table that records which ran.
type Migrations struct {
	Table string
	FS    fs.FS
}

// Embedded is a service's own migration set: the goose SQL files at the root of fsys (the
// service's embed.FS), recorded in goose's default table inside the service's schema.
func Embedded(fsys fs.FS) Migrations { return Migrations{Table: "goose_db_version", FS: fsys} }

// Schema is what a service owns in the database: its schema's name and the migration sets that
// build it, its own first, then the shared ones it uses (idempotency keys, outbox, custom fields).
type Schema struct {
	Name string
	Sets []Migrations
}

// Up migrates the schema (Migrate): safe from any number of processes starting at once.
func (s Schema) Up(ctx context.Context, conn *sqlx.DB) error {
	return Migrate(ctx, conn, s.Name, s.Sets...)
}

// Open is the one way a service's process gets its database: a pool on the schema (Open), with
// the schema migrated. The pool is closed again when the migration fails.
func (s Schema) Open(ctx context.Context, rawURL string, maxConns int) (*sqlx.DB, error) {
	conn, err := Open(ctx, rawURL, s.Name, maxConns)
	if err != nil {
		return nil, err
	}
	if err := s.Up(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// withSearchPath adds search_path to a connection string, in either of the forms the driver
// accepts: a URL (postgres://...) or key=value pairs.
func withSearchPath(raw, schema string) (string, error) {
	if !strings.Contains(raw, "://") {
		return strings.TrimSpace(raw + " search_path=" + schema), nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("database url: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Migrate creates schema if needed and applies every set, under an advisory lock on the schema so
// that N replicas starting at once run each migration exactly once. The lock is held on the very
// connection that runs the migrations, so a pool of one connection is enough.
func Migrate(ctx context.Context, conn *sqlx.DB, schema string, sets ...Migrations) error {
	lock := schemaLock(schema)
	if err := createSchema(ctx, conn.DB, schema, lock); err != nil {
		return fmt.Errorf("migrate %s: %w", schema, err)
	}
	for _, set := range sets {
		if err := migrateSet(ctx, conn.DB, set, lock); err != nil {
			return fmt.Errorf("migrate %s (%s): %w", schema, set.Table, err)
		}
	}
	return nil
}

// createSchema runs CREATE SCHEMA under the schema's lock: two sessions creating the same schema
// at once would otherwise fail on the catalog's unique index.
func createSchema(ctx context.Context, conn *sql.DB, schema string, lock advisoryLock) error {
	c, err := conn.Conn(ctx)
	if err != nil {
		return fmt.Errorf("conn: %w", err)
	}
	defer c.Close()
	if err := lock.SessionLock(ctx, c); err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+pq.QuoteIdentifier(schema))
	if uerr := lock.SessionUnlock(context.WithoutCancel(ctx), c); uerr != nil && err == nil {
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return nil
}

func schemaLock(schema string) advisoryLock {
	h := fnv.New64a()
	_, _ = h.Write([]byte("ccplatform.migrate." + schema))
	return advisoryLock(int64(h.Sum64()))
}

// advisoryLock is a PostgreSQL session advisory lock that waits for as long as the context allows
// (goose's own locker polls, which makes replicas that start together wait seconds for nothing).
type advisoryLock int64

func (l advisoryLock) SessionLock(ctx context.Context, c *sql.Conn) error {
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(l)); err != nil {
		// A cancelled wait may still have taken the lock: drop the session so that it cannot go
		// back to the pool holding it.
		_ = c.Raw(func(any) error { return driver.ErrBadConn })
		return fmt.Errorf("lock: %w", err)
	}
	return nil
}

func (l advisoryLock) SessionUnlock(ctx context.Context, c *sql.Conn) error {
	var released bool
	if err := c.QueryRowContext(ctx, `SELECT pg_advisory_unlock($1)`, int64(l)).Scan(&released); err != nil {
		// The session is broken; close it rather than return it to the pool still holding the lock.
		_ = c.Raw(func(any) error { return driver.ErrBadConn })
		return fmt.Errorf("unlock: %w", err)
	}
	if !released {
		return errors.New("unlock: the lock was not held")
	}
	return nil
}

func migrateSet(ctx context.Context, conn *sql.DB, set Migrations, lock advisoryLock) error {
	store, err := database.NewStore(database.DialectPostgres, set.Table)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	p, err := goose.NewProvider("", conn, set.FS,
		goose.WithStore(store), goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(lock))
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("up: %w", err)
	}
	return nil
}

// InTx runs fn in a transaction, commits when fn succeeds and rolls back when it fails. A failed
// commit is reported, never swallowed: the caller must not say "done" for it.
func InTx(ctx context.Context, conn *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	done := false
	defer func() {
		if !done {
			// fn panicked: give the connection back instead of leaving the transaction open.
			_ = tx.Rollback()
		}
	}()
	err = fn(tx)
	done = true
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// UniqueViolation reports whether err is a unique-constraint violation, and of which constraint.
func UniqueViolation(err error) (constraint string, ok bool) {
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.Constraint, true
	}
	return "", false
}

// IsNoRows reports sql.ErrNoRows.
func IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// OneRow is the error of a statement on one row: no row (sql.ErrNoRows) is missing, the answer
// for a row that does not exist (an apperr NotFound, usually); any other error is wrapped with
// what the statement was doing (doing formatted with args).
func OneRow(err, missing error, doing string, args ...any) error {
	switch {
	case err == nil:
		return nil
	case IsNoRows(err):
		return missing
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(doing, args...), err)
}

// conflictTries bounds InTxRetrying: a conflict that comes back twice more is not a race any
// longer but load, and the caller's answer (503 through Transient) says so.
const conflictTries = 3

// InTxRetrying is InTx, run again from the start when PostgreSQL ends the transaction to break a
// deadlock (40P01) or a serialization conflict (40001): the victim of such a conflict did nothing
// wrong, and its work succeeds once the other side has committed. fn must be safe to run again.
func InTxRetrying(ctx context.Context, conn *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	var err error
	for range conflictTries {
		if err = InTx(ctx, conn, fn); !conflict(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// conflict reports whether err is PostgreSQL breaking a deadlock or a serialization conflict.
func conflict(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}
