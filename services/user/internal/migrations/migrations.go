// Package migrations holds the SQL that builds the users schema, embedded so that the service
// and user-admin both carry it and migrate the schema themselves at start.
package migrations

import (
	"embed"

	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/outbox"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the user service owns: its tables, the idempotency table of its
// create routes (agent groups, API keys) and the outbox of its events (agent.state.changed). The service and user-admin both migrate it at start
// (Schema.Open), which is safe from many processes at once.
var Schema = db.Schema{Name: "users", Sets: []db.Migrations{db.Embedded(files), idempotency.Migrations(), outbox.Migrations()}}
