// Package migrations holds the SQL that builds the lead service's schema, embedded so that both
// binaries migrate the schema at start without files on disk.
package migrations

import (
	"ccplatform/pkg/customfield"
	"context"
	"embed"

	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"

	"github.com/jmoiron/sqlx"
)

// Schema is the PostgreSQL schema the lead service owns.
const Schema = "leads"

//go:embed *.sql
var files embed.FS

// Leads is the service's own migration set.
func Leads() db.Migrations {
	return db.Migrations{Table: "goose_db_version", FS: files}
}

// Up migrates the schema: the service's tables and the idempotency table of its create routes.
// lead-api and lead-worker both call it; db.Migrate's advisory lock makes that safe from any number
// of replicas starting at once.
func Up(ctx context.Context, conn *sqlx.DB) error {
	return db.Migrate(ctx, conn, Schema, Leads(), customfield.Migrations(), idempotency.Migrations())
}
