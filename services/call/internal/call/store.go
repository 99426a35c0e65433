package call

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads calls.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

const columns = `id, sip_endpoint_id, finish_initiator, direction, lead_id, user_id, order_id, status_id,
	total_duration_seconds, wait_time_duration_seconds, talk_time_duration_seconds, is_predictive,
	client_phone, has_records, created_at`

// where is the list's filter; an absent filter is a NULL parameter, which PostgreSQL folds away
// when it plans the statement with its values, so the lead or order index still serves the list.
const where = `
WHERE ($1::bigint[] IS NULL OR lead_id = ANY($1))
  AND ($2::bigint[] IS NULL OR order_id = ANY($2))
  AND ($3::bigint[] IS NULL OR user_id = ANY($3))
  AND ($4::bigint[] IS NULL OR status_id = ANY($4))
  AND ($5::timestamptz IS NULL OR created_at >= $5)
  AND ($6::timestamptz IS NULL OR created_at < $6)`

// List reads one page of the calls that match f, newest first; id breaks ties so that pages never
// overlap or skip a call.
func (s *Store) List(ctx context.Context, f Filter) ([]Record, error) {
	const q = `SELECT ` + columns + ` FROM calls` + where + `
ORDER BY created_at DESC, id DESC
OFFSET $7 LIMIT $8`
	args := append(filterArgs(f), f.Page.Offset, f.Page.Limit)
	list := []Record{}
	if err := s.conn.SelectContext(ctx, &list, q, args...); err != nil {
		return nil, fmt.Errorf("list calls: %w", err)
	}
	return list, nil
}

// Count is how many calls match f (its page ignored), for the list's total.
func (s *Store) Count(ctx context.Context, f Filter) (int, error) {
	const q = `SELECT count(*) FROM calls` + where
	var n int
	if err := s.conn.GetContext(ctx, &n, q, filterArgs(f)...); err != nil {
		return 0, fmt.Errorf("count calls: %w", err)
	}
	return n, nil
}

func filterArgs(f Filter) []any {
	return []any{ids(f.LeadIDs), ids(f.OrderIDs), ids(f.UserIDs), ids(f.StatusIDs),
		timeOrNil(f.Period.From), timeOrNil(f.Period.To)}
}

// ids is NULL for an absent filter (a nil pq.Int64Array is sent as NULL).
func ids(v []int64) pq.Int64Array {
	if len(v) == 0 {
		return nil
	}
	return pq.Int64Array(v)
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// Get reads one call; an unknown id is NotFound.
func (s *Store) Get(ctx context.Context, id int64) (Record, error) {
	const q = `SELECT ` + columns + ` FROM calls WHERE id = $1`
	var r Record
	err := s.conn.GetContext(ctx, &r, q, id)
	if err = db.OneRow(err, apperr.NotFoundf("call %d not found", id), "get call %d", id); err != nil {
		return Record{}, err
	}
	return r, nil
}
