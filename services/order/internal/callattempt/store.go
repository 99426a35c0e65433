package callattempt

import (
	"context"
	"fmt"

	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes call-attempt groups.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// defaultLock serializes the creation of default groups: two concurrent "make me the default"
// would otherwise both unset the old default and then race on the one-default unique index.
const defaultLock = 7_236_001

// Create stores g and returns its id. A new default group takes over from the old default in the
// same transaction, so there is never a moment with two defaults (or none, when one existed).
func (s *Store) Create(ctx context.Context, g Group, userID *int64) (int64, error) {
	const (
		lock     = `SELECT pg_advisory_xact_lock($1)`
		unsetOld = `UPDATE call_attempt_groups SET is_default = false, updated_at = now(), updated_by = $1 WHERE is_default`
		insert   = `
INSERT INTO call_attempt_groups (title, intervals, is_default, reset_attempts_enabled, created_by, updated_by)
VALUES ($1, $2, $3, $4, $5, $5)
RETURNING id`
	)
	var id int64
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		if g.IsDefault {
			if _, err := tx.ExecContext(ctx, lock, defaultLock); err != nil {
				return fmt.Errorf("lock default: %w", err)
			}
			if _, err := tx.ExecContext(ctx, unsetOld, userID); err != nil {
				return fmt.Errorf("unset old default: %w", err)
			}
		}
		return tx.GetContext(ctx, &id, insert, g.Title, pq.Int64Array(g.Intervals), g.IsDefault, g.ResetAttemptsEnabled, userID)
	})
	if err != nil {
		return 0, fmt.Errorf("create call-attempt group: %w", err)
	}
	return id, nil
}

// Exists reports whether a group with id exists.
func (s *Store) Exists(ctx context.Context, id int64) (bool, error) {
	const q = `SELECT EXISTS (SELECT 1 FROM call_attempt_groups WHERE id = $1)`
	var ok bool
	if err := s.conn.GetContext(ctx, &ok, q, id); err != nil {
		return false, fmt.Errorf("call-attempt group %d exists: %w", id, err)
	}
	return ok, nil
}

// DefaultID is the id of the default group, nil when there is none.
func (s *Store) DefaultID(ctx context.Context) (*int64, error) {
	const q = `SELECT id FROM call_attempt_groups WHERE is_default`
	var id int64
	err := s.conn.GetContext(ctx, &id, q)
	if db.IsNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("default call-attempt group: %w", err)
	}
	return &id, nil
}

// Get reads one group; found is false when it does not exist.
func (s *Store) Get(ctx context.Context, id int64) (g Group, found bool, err error) {
	const q = `SELECT id, title, intervals, is_default, reset_attempts_enabled FROM call_attempt_groups WHERE id = $1`
	var row struct {
		ID                   int64         `db:"id"`
		Title                string        `db:"title"`
		Intervals            pq.Int64Array `db:"intervals"`
		IsDefault            bool          `db:"is_default"`
		ResetAttemptsEnabled bool          `db:"reset_attempts_enabled"`
	}
	err = s.conn.GetContext(ctx, &row, q, id)
	if db.IsNoRows(err) {
		return Group{}, false, nil
	}
	if err != nil {
		return Group{}, false, fmt.Errorf("get call-attempt group %d: %w", id, err)
	}
	return Group{ID: row.ID, Title: row.Title, Intervals: row.Intervals, IsDefault: row.IsDefault, ResetAttemptsEnabled: row.ResetAttemptsEnabled}, true, nil
}
