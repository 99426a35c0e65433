// Package migrations holds the SQL that builds the webhook service's schema, embedded so that both
// binaries migrate it at start without files on disk.
package migrations

import (
	"embed"

	"ccplatform/pkg/db"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/outbox"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the webhook service owns: subscriptions, events, deliveries and
// their attempts, the idempotency table of create, and the outbox of the notifications it sends when it disables an endpoint.
var Schema = db.Schema{Name: "webhooks", Sets: []db.Migrations{db.Embedded(files), idempotency.Migrations(), outbox.Migrations()}}
