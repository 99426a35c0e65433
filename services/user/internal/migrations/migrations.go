// Package migrations holds the SQL that builds the users schema, embedded so that the service
// and ccadmin both carry it and migrate the schema themselves at start.
package migrations

import (
	"context"
	"embed"
	"io/fs"

	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"

	"github.com/jmoiron/sqlx"
)

//go:embed sql/*.sql
var files embed.FS

// Schema is the PostgreSQL schema the user service owns.
const Schema = "users"

// Set is the users schema's migration set, recorded in its own goose version table.
func Set() db.Migrations {
	sub, err := fs.Sub(files, "sql")
	if err != nil {
		panic(err) // the embedded folder is fixed at build time
	}
	return db.Migrations{Table: "goose_db_version", FS: sub}
}

// Apply brings the users schema up to date on conn (whose search_path is Schema): the service's
// tables and the idempotency table of its create route (agent groups). It is safe to run from many
// processes at once.
func Apply(ctx context.Context, conn *sqlx.DB) error {
	return db.Migrate(ctx, conn, Schema, Set(), idempotency.Migrations())
}
