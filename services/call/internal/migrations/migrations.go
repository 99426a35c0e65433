// Package migrations holds the SQL that builds the call service's schema, embedded so that both
// binaries (the read API and the ingest consumer) migrate the schema themselves at start.
package migrations

import (
	"embed"

	"ccplatform/pkg/db"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the call service owns and its migrations. Both binaries open
// it with Schema.Open, which migrates it; that is safe from many replicas at once.
var Schema = db.Schema{Name: "calls", Sets: []db.Migrations{db.Embedded(files)}}
