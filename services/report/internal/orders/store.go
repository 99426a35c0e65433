package orders

import (
	"context"
	"fmt"
	"time"

	"ccplatform/services/report/internal/bucket"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads the aggregates.
type Store struct{ conn *sqlx.DB }

// NewStore reads conn's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Sums are the figures of one order in one interval as stored.
type Sums struct {
	OrderID     int64 `db:"order_id"`
	Interval    int   `db:"i"`
	Calls       int64 `db:"calls"`
	Answered    int64 `db:"answered"`
	Handled     int64 `db:"handled"`
	Abandoned   int64 `db:"abandoned"`
	TalkSeconds int64 `db:"talk_seconds"`
	LeadsCalled int64 `db:"leads_called"`
}

// Entered is the leads of one order that entered one status in one interval.
type Entered struct {
	OrderID  int64 `db:"order_id"`
	Interval int   `db:"i"`
	StatusID int64 `db:"status_id"`
	Entered  int64 `db:"entered"`
}

// AgentTime is the agent time logged in one order in one interval (closed state segments announced
// with the order, offline left out), and its wrap-up part.
type AgentTime struct {
	OrderID  int64 `db:"order_id"`
	Interval int   `db:"i"`
	MS       int64 `db:"ms"`
	WrapUpMS int64 `db:"wrap_up_ms"`
}

// Every order when Scope.All; else only Scope.OrderIDs.
type Scope struct {
	All      bool
	OrderIDs []int64
}

// grid is where a report's sums are read: the 15-minute buckets, or their UTC hours. The leads
// called are always read from the buckets (lead_call_buckets): they have no hourly rows.
type grid struct{ orders, statuses, at string }

var (
	quarters = grid{orders: "order_buckets", statuses: "status_buckets", at: "bucket"}
	hours    = grid{orders: "order_hours", statuses: "status_hours", at: "hour"}
)

// Read sums the aggregates of the orders in scope into the intervals whose starts (and end) are
// starts: from the hourly roll-up when every start is a UTC hour (a quarter of the rows), else from
// the 15-minute buckets.
func (s *Store) Read(ctx context.Context, scope Scope, starts []time.Time) ([]Sums, []Entered, []AgentTime, error) {
	g := quarters
	if bucket.OnHours(starts) {
		g = hours
	}
	intervalOf := func(at string) string { return `width_bucket(` + at + `, $1::timestamptz[]) - 1` }
	interval := intervalOf(g.at)
	from, to := starts[0], starts[len(starts)-1]
	args := []any{pq.Array(starts), from, to, scope.All, pq.Array(scope.OrderIDs)}
	where := func(at string) string {
		return at + ` >= $2 AND ` + at + ` < $3 AND ($4 OR order_id = ANY($5::bigint[]))`
	}
	sumsSQL := `WITH c AS (
			SELECT order_id, ` + interval + ` AS i, sum(calls)::bigint AS calls, sum(answered)::bigint AS answered,
				sum(handled)::bigint AS handled, sum(abandoned)::bigint AS abandoned, sum(talk_seconds)::bigint AS talk_seconds
			FROM ` + g.orders + ` WHERE ` + where(g.at) + ` GROUP BY 1, 2),
		l AS (SELECT order_id, ` + intervalOf("bucket") + ` AS i, count(DISTINCT lead_id) AS leads_called
			FROM lead_call_buckets WHERE ` + where("bucket") + ` GROUP BY 1, 2)
		SELECT c.*, coalesce(l.leads_called, 0) AS leads_called FROM c LEFT JOIN l USING (order_id, i)`
	var sums []Sums
	if err := s.conn.SelectContext(ctx, &sums, sumsSQL, args...); err != nil {
		return nil, nil, nil, fmt.Errorf("read call sums: %w", err)
	}
	var entered []Entered
	if err := s.conn.SelectContext(ctx, &entered, `SELECT order_id, `+interval+` AS i, status_id, sum(entered)::bigint AS entered
		FROM `+g.statuses+` WHERE `+where(g.at)+` GROUP BY 1, 2, 3`, args...); err != nil {
		return nil, nil, nil, fmt.Errorf("read status entries: %w", err)
	}
	// Agent time has no roll-up: a late state takes time back from the buckets it spans, which
	// the hours would have to follow (services/report/README.md).
	var agentTime []AgentTime
	if err := s.conn.SelectContext(ctx, &agentTime, `SELECT order_id, width_bucket(bucket, $1::timestamptz[]) - 1 AS i, sum(ms)::bigint AS ms,
		coalesce(sum(ms) FILTER (WHERE state = 'wrap-up'), 0)::bigint AS wrap_up_ms
		FROM agent_state_buckets WHERE `+where("bucket")+` AND order_id > 0 GROUP BY 1, 2`, args...); err != nil {
		return nil, nil, nil, fmt.Errorf("read agent time: %w", err)
	}
	return sums, entered, agentTime, nil
}
