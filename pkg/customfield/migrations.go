package customfield

import (
	"embed"
	"io/fs"

	"ccplatform/pkg/db"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the catalog's table, applied in each service's own schema.
func Migrations() db.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded folder is fixed at build time
	}
	return db.Migrations{Table: "customfield_version", FS: sub}
}
