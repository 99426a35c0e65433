// Package migrations holds the SQL that builds the notification service's schema, embedded so that
// both binaries migrate it at start without files on disk.
package migrations

import (
	"context"
	"embed"

	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"

	"github.com/jmoiron/sqlx"
)

// Schema is the PostgreSQL schema the notification service owns.
const Schema = "notifications"

//go:embed *.sql
var files embed.FS

// Notifications is the service's own migration set.
func Notifications() db.Migrations {
	return db.Migrations{Table: "goose_db_version", FS: files}
}

// Up migrates the schema: the records, their deliveries, and the idempotency table of the send
// routes. Safe to run from many replicas of either binary at once (db.Migrate holds a lock).
func Up(ctx context.Context, conn *sqlx.DB) error {
	return db.Migrate(ctx, conn, Schema, Notifications(), idempotency.Migrations())
}
