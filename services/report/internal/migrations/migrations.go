// Package migrations holds the SQL that builds the report service's schema, embedded so that the
// binary migrates it at start without files on disk.
package migrations

import (
	"embed"

	"ccplatform/pkg/db"
)

//go:embed *.sql
var files embed.FS

// Schema is the PostgreSQL schema the report service owns: the aggregates of calls, leads and
// agent states in 15-minute buckets, and the ids of the events already counted.
var Schema = db.Schema{Name: "reports", Sets: []db.Migrations{db.Embedded(files)}}
