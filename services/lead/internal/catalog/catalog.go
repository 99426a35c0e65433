// Package catalog holds the lead service's catalogs: lead statuses with their categories (seeded by
// migration) and the lead custom fields (pkg/customfield, in the leads schema). Both are small
// tables read whole or by id.
package catalog

import (
	"context"
	"fmt"
	"sync"
	"time"

	"ccplatform/pkg/customfield"

	"github.com/jmoiron/sqlx"
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

// StatusCacheTTL bounds how long the status catalog is reused before it is read again. The
// catalog is seeded by migration and has no write route, so a short TTL only bounds how long a
// status added by hand takes to be seen; it saves a database round trip on every write.
const StatusCacheTTL = 30 * time.Second

// Store reads and writes the catalogs; the custom-field methods (ByIDs, List, Upsert) come from
// the shared catalog mechanics.
type Store struct {
	conn sqlx.QueryerContext
	*customfield.Store
	now func() time.Time

	mu       sync.Mutex
	statuses Statuses
	expires  time.Time
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store {
	return &Store{conn: conn, Store: customfield.NewStore(conn), now: time.Now}
}

// Statuses is the whole status catalog (a handful of rows), read at most once per StatusCacheTTL.
// The map is shared between callers: they only read it.
func (s *Store) Statuses(ctx context.Context) (Statuses, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.statuses != nil && s.now().Before(s.expires) {
		return s.statuses, nil
	}
	// Read under the lock: callers that find the cache stale at once wait for one read instead of
	// each sending their own.
	const q = `SELECT id, code, name, category FROM lead_statuses ORDER BY id`
	var list []Status
	if err := sqlx.SelectContext(ctx, s.conn, &list, q); err != nil {
		return nil, fmt.Errorf("lead statuses: %w", err)
	}
	out := make(Statuses, len(list))
	for _, st := range list {
		out[st.ID] = st
	}
	s.statuses, s.expires = out, s.now().Add(StatusCacheTTL)
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
