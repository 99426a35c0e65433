// Package migrations holds the SQL that builds the lead service's schema, embedded so that both
// binaries migrate the schema at start without files on disk.
package migrations

import (
	"embed"

	"ccplatform/pkg/customfield"
	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the lead service owns: its tables, its custom-field catalog and
// the idempotency table of its create routes (each set with a version table of its own). Its
// events have no table: they go into the WAL (00012 made the publication and moved the last rows
// of the outbox it had before, then dropped it). lead-api and lead-worker both migrate it at
// start (wiring.OpenDB, after making the slot), which is safe from any number of replicas at once.
var Schema = db.Schema{Name: "leads", Sets: []db.Migrations{
	db.Embedded(files), customfield.Migrations(), idempotency.Migrations(),
}}
