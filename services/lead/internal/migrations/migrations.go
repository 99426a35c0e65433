// Package migrations holds the SQL that builds the lead service's schema, embedded so that both
// binaries migrate the schema at start without files on disk.
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

// Schema is the PostgreSQL schema the lead service owns: its tables, its custom-field catalog, the
// idempotency table of its create routes and the outbox of its events (each set with a version
// table of its own, so adding the outbox leaves the existing versions as they are). lead-api and
// lead-worker both migrate it at start (Schema.Open), which is safe from any number of replicas
// at once.
var Schema = db.Schema{Name: "leads", Sets: []db.Migrations{
	db.Embedded(files), customfield.Migrations(), idempotency.Migrations(), outbox.Migrations(),
}}
