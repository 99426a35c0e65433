package customfield

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes the catalog.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Upsert creates the field with f.Code or, when one exists, replaces its name, type and options,
// so that seeding the catalog can be run again without duplicates.
func (s *Store) Upsert(ctx context.Context, f Field) (int64, error) {
	const q = `
INSERT INTO custom_fields (code, name, type, options)
VALUES ($1, $2, $3, $4)
ON CONFLICT (code) DO UPDATE
SET name = EXCLUDED.name, type = EXCLUDED.type, options = EXCLUDED.options, updated_at = now()
RETURNING id`
	options := f.Options
	if options == nil {
		options = pq.StringArray{}
	}
	var id int64
	if err := s.conn.GetContext(ctx, &id, q, f.Code, f.Name, f.Type, options); err != nil {
		return 0, fmt.Errorf("upsert custom field %s: %w", f.Code, err)
	}
	return id, nil
}

// List is the whole catalog by id.
func (s *Store) List(ctx context.Context) ([]Field, error) {
	const q = `SELECT id, code, name, type, options FROM custom_fields ORDER BY id`
	list := []Field{}
	if err := s.conn.SelectContext(ctx, &list, q); err != nil {
		return nil, fmt.Errorf("list custom fields: %w", err)
	}
	return list, nil
}

// ByIDs returns the fields among ids that exist, keyed by id.
func (s *Store) ByIDs(ctx context.Context, ids []int64) (map[int64]Field, error) {
	out := make(map[int64]Field, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	const q = `SELECT id, code, name, type, options FROM custom_fields WHERE id = ANY($1)`
	var list []Field
	if err := s.conn.SelectContext(ctx, &list, q, pq.Int64Array(ids)); err != nil {
		return nil, fmt.Errorf("custom fields by id: %w", err)
	}
	for _, f := range list {
		out[f.ID] = f
	}
	return out, nil
}
