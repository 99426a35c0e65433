// Package db opens a service's PostgreSQL schema, migrates it, and runs transactions.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
)

// Open connects to the database at rawURL with every connection's search_path set to schema, so a
// service's SQL names its own tables unqualified and never sees another service's.
func Open(ctx context.Context, rawURL, schema string, maxConns int) (*sqlx.DB, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	conn, err := sqlx.Open("postgres", u.String())
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
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

// Migrations is one ordered set of goose SQL migrations and the table that records which ran.
type Migrations struct {
	Table string
	FS    fs.FS
}

// Migrate creates schema if needed and applies every set, under an advisory lock on the schema so
// that N replicas starting at once run each migration exactly once.
func Migrate(ctx context.Context, conn *sqlx.DB, schema string, sets ...Migrations) error {
	c, err := conn.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: conn: %w", schema, err)
	}
	defer c.Close()
	h := fnv.New64a()
	_, _ = h.Write([]byte("ccplatform.migrate." + schema))
	lockID := int64(h.Sum64())
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockID); err != nil {
		return fmt.Errorf("migrate %s: lock: %w", schema, err)
	}
	defer func() { _, _ = c.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, lockID) }()
	if _, err := c.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+pq.QuoteIdentifier(schema)); err != nil {
		return fmt.Errorf("migrate %s: create schema: %w", schema, err)
	}
	for _, set := range sets {
		if err := migrateSet(ctx, conn.DB, set); err != nil {
			return fmt.Errorf("migrate %s (%s): %w", schema, set.Table, err)
		}
	}
	return nil
}

func migrateSet(ctx context.Context, conn *sql.DB, set Migrations) error {
	store, err := database.NewStore(database.DialectPostgres, set.Table)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	p, err := goose.NewProvider("", conn, set.FS, goose.WithStore(store), goose.WithDisableGlobalRegistry(true))
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
	if err := fn(tx); err != nil {
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
