// Package dbtest gives a test package a PostgreSQL database of its own, created for the run and
// dropped after, on the server that DATABASE_URL (or the local default) points at.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the driver the project's database code uses
)

// DefaultURL is the database the dev scripts create.
const DefaultURL = "postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable"

// BaseURL is DATABASE_URL or DefaultURL.
func BaseURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

var unsafe = regexp.MustCompile(`[^a-z0-9_]+`)

// Create makes a fresh database named after label and returns its URL and a function that drops it.
func Create(label string) (string, func() error, error) {
	base, err := url.Parse(BaseURL())
	if err != nil {
		return "", nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	// PostgreSQL cuts names at 63 bytes: shorten the label, never the random part that keeps two
	// runs apart.
	const maxLabel = 63 - len("cctest_") - len("_") - 8
	clean := unsafe.ReplaceAllString(strings.ToLower(label), "_")
	if len(clean) > maxLabel {
		clean = clean[:maxLabel]
	}
	name := "cctest_" + clean + "_" + hex.EncodeToString(suffix)
	admin, err := sql.Open("postgres", base.String())
	if err != nil {
		return "", nil, fmt.Errorf("open %s: %w", base.Redacted(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		_ = admin.Close()
		return "", nil, fmt.Errorf("create database %s (is PostgreSQL up? run scripts/deps.sh): %w", name, err)
	}
	u := *base
	u.Path = "/" + name
	return u.String(), dropper(admin, name), nil
}

// Existing is the URL of the database name on the same server (one Create made and a run kept) and
// a function that drops it as Create's does.
func Existing(name string) (string, func() error, error) {
	base, err := url.Parse(BaseURL())
	if err != nil {
		return "", nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	admin, err := sql.Open("postgres", base.String())
	if err != nil {
		return "", nil, fmt.Errorf("open %s: %w", base.Redacted(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var exists bool
	if err := admin.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || !exists {
		_ = admin.Close()
		if err == nil {
			err = fmt.Errorf("no database %s", name)
		}
		return "", nil, err
	}
	u := *base
	u.Path = "/" + name
	return u.String(), dropper(admin, name), nil
}

// dropper drops the database name through admin, and closes admin.
func dropper(admin *sql.DB, name string) func() error {
	return func() error {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// A database with a logical slot cannot be dropped, FORCE or not: the sessions on it (a
		// relay's replication connection among them) end first, then its slots go. Termination is
		// a signal, so each wait (the second argument, ms) lets the walsender let go of its slot
		// before the slot is dropped.
		if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
			return fmt.Errorf("end the sessions on %s: %w", name, err)
		}
		if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(active_pid, 10000) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`, name); err != nil {
			return fmt.Errorf("end the readers of the slots of %s: %w", name, err)
		}
		if _, err := admin.ExecContext(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, name); err != nil {
			return fmt.Errorf("drop the slots of %s: %w", name, err)
		}
		_, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
		return err
	}
}

// Main runs a test package against a database of its own: it calls run with the database URL
// (run returns m.Run()'s code), drops the database, and exits.
func Main(m *testing.M, label string, run func(url string) int) {
	u, drop, err := Create(label)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbtest:", err)
		os.Exit(1)
	}
	code := run(u)
	if err := drop(); err != nil {
		fmt.Fprintln(os.Stderr, "dbtest: drop:", err)
	}
	os.Exit(code)
}

// Schema is a service's schema (db.Schema, which this package cannot import: pkg/db's own tests
// use it).
type Schema interface {
	Open(ctx context.Context, rawURL string, maxConns int) (*sqlx.DB, error)
}

// MainSchema is Main with s opened on the database, migrated: run gets the pool (of maxConns
// connections, closed after it) and the database URL.
func MainSchema(m *testing.M, label string, s Schema, maxConns int, run func(conn *sqlx.DB, url string) int) {
	Main(m, label, func(u string) int {
		conn, err := s.Open(context.Background(), u, maxConns)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dbtest:", err)
			return 1
		}
		defer conn.Close()
		return run(conn, u)
	})
}
