package app

import (
	"context"

	"ccplatform/pkg/config"
	"ccplatform/pkg/db"
	"ccplatform/pkg/ops"

	"github.com/jmoiron/sqlx"
)

// OpenDatabase opens the pool on a service's schema, migrated (db.Schema.Open), and adds the
// database's readiness check and pool metrics to o. run closes it last (defer right after).
func OpenDatabase(ctx context.Context, o *ops.Ops, s db.Schema, c config.Database) (*sqlx.DB, error) {
	conn, err := s.Open(ctx, c.URL, c.MaxConns)
	if err != nil {
		return nil, err
	}
	o.Database(conn.DB)
	return conn, nil
}
