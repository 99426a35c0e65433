// Package migrations holds the SQL that builds the order service's schema, embedded so that the
// binary migrates its own schema at start without files on disk.
package migrations

import (
	"context"
	"embed"

	"ccplatform/pkg/customfield"
	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/outbox"

	"github.com/jmoiron/sqlx"
)

// Schema is the PostgreSQL schema the order service owns.
const Schema = "orders"

//go:embed *.sql
var files embed.FS

// Orders is the service's own migration set.
func Orders() db.Migrations {
	return db.Migrations{Table: "goose_db_version", FS: files}
}

// Up migrates the schema: the service's tables, its custom-field catalog, the idempotency table of
// its create routes and the outbox of its events. It is safe to run from many replicas at once (db.Migrate holds an
// advisory lock).
func Up(ctx context.Context, conn *sqlx.DB) error {
	return db.Migrate(ctx, conn, Schema, Orders(), customfield.Migrations(), idempotency.Migrations(), outbox.Migrations())
}
