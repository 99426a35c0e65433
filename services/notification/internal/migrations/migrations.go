// Package migrations holds the SQL that builds the notification service's schema, embedded so that
// both binaries migrate it at start without files on disk.
package migrations

import (
	"embed"

	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the notification service owns: the records, their deliveries,
// and the idempotency table of the send routes.
var Schema = db.Schema{Name: "notifications", Sets: []db.Migrations{db.Embedded(files), idempotency.Migrations()}}
