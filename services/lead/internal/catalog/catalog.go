// Package catalog holds the lead service's catalogs: lead statuses with their categories (seeded by
// migration) and the lead custom fields with the rules a value must follow to match its field's
// type. Both are small tables read whole or by id.
package catalog

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Status categories. Only in_progress statuses may be given when a lead is created.
const (
	CategoryInProgress = "in_progress"
	CategorySuccess    = "success"
	CategoryFailure    = "failure"
)

// DefaultStatusCode is the status of a lead created without one.
const DefaultStatusCode = "new"

// Status is one lead status.
type Status struct {
	ID       int64  `json:"id" db:"id"`
	Code     string `json:"code" db:"code"`
	Name     string `json:"name" db:"name"`
	Category string `json:"category" db:"category"`
}

// Statuses is the status catalog, keyed by id.
type Statuses map[int64]Status

// Default is the id of the status of a lead created without one.
func (s Statuses) Default() (int64, bool) {
	for _, st := range s {
		if st.Code == DefaultStatusCode {
			return st.ID, true
		}
	}
	return 0, false
}

// CheckForCreate is the rule a statusId of a create follows: an existing status of category
// in_progress. rule is "" when id passes.
func (s Statuses) CheckForCreate(id int64) (rule string) {
	st, ok := s[id]
	switch {
	case !ok:
		return fmt.Sprintf("no lead status has id %d", id)
	case st.Category != CategoryInProgress:
		return fmt.Sprintf("status %d (%s) is not allowed on create: only statuses of category %s are", id, st.Code, CategoryInProgress)
	}
	return ""
}

// CheckForUpdate is the rule a statusId of an update follows: any existing status.
func (s Statuses) CheckForUpdate(id int64) (rule string) {
	if _, ok := s[id]; !ok {
		return fmt.Sprintf("no lead status has id %d", id)
	}
	return ""
}

// Store reads and writes the catalogs.
type Store struct {
	conn sqlx.QueryerContext
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Statuses reads the whole status catalog (a handful of rows).
func (s *Store) Statuses(ctx context.Context) (Statuses, error) {
	const q = `SELECT id, code, name, category FROM lead_statuses ORDER BY id`
	var list []Status
	if err := sqlx.SelectContext(ctx, s.conn, &list, q); err != nil {
		return nil, fmt.Errorf("lead statuses: %w", err)
	}
	out := make(Statuses, len(list))
	for _, st := range list {
		out[st.ID] = st
	}
	return out, nil
}

// StatusList is the status catalog by id, for the internal route.
func (s *Store) StatusList(ctx context.Context) ([]Status, error) {
	const q = `SELECT id, code, name, category FROM lead_statuses ORDER BY id`
	list := []Status{}
	if err := sqlx.SelectContext(ctx, s.conn, &list, q); err != nil {
		return nil, fmt.Errorf("lead statuses: %w", err)
	}
	return list, nil
}

// UpsertField creates the field with f.Code or, when one exists, replaces its name, type and
// options, so that seeding the catalog can run again without duplicates.
func (s *Store) UpsertField(ctx context.Context, f Field) (int64, error) {
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
	if err := sqlx.GetContext(ctx, s.conn, &id, q, f.Code, f.Name, f.Type, options); err != nil {
		return 0, fmt.Errorf("upsert custom field %s: %w", f.Code, err)
	}
	return id, nil
}

// Fields is the whole custom-field catalog by id.
func (s *Store) Fields(ctx context.Context) ([]Field, error) {
	const q = `SELECT id, code, name, type, options FROM custom_fields ORDER BY id`
	list := []Field{}
	if err := sqlx.SelectContext(ctx, s.conn, &list, q); err != nil {
		return nil, fmt.Errorf("list custom fields: %w", err)
	}
	return list, nil
}

// FieldsByID returns the fields among ids that exist, keyed by id.
func (s *Store) FieldsByID(ctx context.Context, ids []int64) (map[int64]Field, error) {
	out := make(map[int64]Field, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	const q = `SELECT id, code, name, type, options FROM custom_fields WHERE id = ANY($1)`
	var list []Field
	if err := sqlx.SelectContext(ctx, s.conn, &list, q, pq.Int64Array(ids)); err != nil {
		return nil, fmt.Errorf("custom fields by id: %w", err)
	}
	for _, f := range list {
		out[f.ID] = f
	}
	return out, nil
}
