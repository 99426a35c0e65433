// Package migrations holds the SQL that builds the call service's schema, embedded so that both
// binaries (the read API and the ingest consumer) migrate the schema themselves at start.
package migrations

import (
	"context"
	"embed"

	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
)

// Schema is the PostgreSQL schema the call service owns.
const Schema = "calls"

//go:embed *.sql
var files embed.FS

// Calls is the service's migration set.
func Calls() db.Migrations {
	return db.Migrations{Table: "goose_db_version", FS: files}
}

// Up migrates the schema. It is safe to run from many replicas of either binary at once
// (db.Migrate holds an advisory lock).
func Up(ctx context.Context, conn *sqlx.DB) error {
	return db.Migrate(ctx, conn, Schema, Calls())
}
