// Package migrations holds the SQL that builds the order service's schema, embedded so that the
// binary migrates its own schema at start without files on disk.
package migrations

import (
	"embed"

	"ccplatform/pkg/customfield"
	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/outbox"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the order service owns: its tables, its custom-field catalog,
// the idempotency table of its create routes and the outbox of its events.
var Schema = db.Schema{Name: "orders", Sets: []db.Migrations{
	db.Embedded(files), customfield.Migrations(), idempotency.Migrations(), outbox.Migrations(),
}}
