package agents

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads the agents' aggregates and their current states.
type Store struct{ conn *sqlx.DB }

// NewStore reads conn's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Filter is who and what a report counts: every agent or Users, every order or Orders (a state
// without an order counts only when every order does).
type Filter struct {
	AllUsers  bool
	Users     []int64
	AllOrders bool
	Orders    []int64
}

// CallSums are an agent's calls in one interval.
type CallSums struct {
	UserID      int64 `db:"user_id"`
	Interval    int   `db:"i"`
	Calls       int64 `db:"calls"`
	Handled     int64 `db:"handled"`
	TalkSeconds int64 `db:"talk_seconds"`
}

// StateSums are an agent's milliseconds in one state (and pause reason) in one interval.
type StateSums struct {
	UserID      int64  `db:"user_id"`
	Interval    int    `db:"i"`
	State       string `db:"state"`
	PauseReason string `db:"pause_reason"`
	MS          int64  `db:"ms"`
}

// Current is an agent's latest state: it lasts until now (no later state has arrived).
type Current struct {
	UserID      int64     `db:"user_id"`
	At          time.Time `db:"at"`
	State       string    `db:"state"`
	PauseReason string    `db:"pause_reason"`
	OrderID     int64     `db:"order_id"`
}

const interval = `width_bucket(bucket, $1::timestamptz[]) - 1`

// Read sums the filter's buckets into the intervals whose starts (and end) are starts, and reads the
// current state of its agents.
func (s *Store) Read(ctx context.Context, f Filter, starts []time.Time) ([]CallSums, []StateSums, []Current, error) {
	args := []any{pq.Array(starts), starts[0], starts[len(starts)-1], f.AllUsers, pq.Array(f.Users), f.AllOrders, pq.Array(f.Orders)}
	where := `bucket >= $2 AND bucket < $3 AND ($4 OR user_id = ANY($5::bigint[])) AND ($6 OR order_id = ANY($7::bigint[]))`
	var calls []CallSums
	if err := s.conn.SelectContext(ctx, &calls, `SELECT user_id, `+interval+` AS i, sum(calls)::bigint AS calls,
		sum(handled)::bigint AS handled, sum(talk_seconds)::bigint AS talk_seconds
		FROM agent_call_buckets WHERE `+where+` GROUP BY 1, 2`, args...); err != nil {
		return nil, nil, nil, fmt.Errorf("read agents' calls: %w", err)
	}
	var states []StateSums
	if err := s.conn.SelectContext(ctx, &states, `SELECT user_id, `+interval+` AS i, state, pause_reason, sum(ms)::bigint AS ms
		FROM agent_state_buckets WHERE `+where+` GROUP BY 1, 2, 3, 4`, args...); err != nil {
		return nil, nil, nil, fmt.Errorf("read agents' state time: %w", err)
	}
	var current []Current
	if err := s.conn.SelectContext(ctx, &current, `SELECT DISTINCT ON (user_id) user_id, at, state, pause_reason, order_id
		FROM agent_states WHERE ($1 OR user_id = ANY($2::bigint[]))
		ORDER BY user_id, at DESC, event_id DESC`, f.AllUsers, pq.Array(f.Users)); err != nil {
		return nil, nil, nil, fmt.Errorf("read agents' current states: %w", err)
	}
	return calls, states, current, nil
}
