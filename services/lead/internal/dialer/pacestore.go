package dialer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// InFlight are the dial times of order's calls in flight at now: its leads under a live lease
// (leased, and not yet given back by a call event, a release or the lease's expiry), each dialed
// when its lease was taken.
func (s *Store) InFlight(ctx context.Context, order int64, now time.Time) ([]time.Time, error) {
	return inFlightOf(ctx, s.conn, order, now)
}

func inFlightOf(ctx context.Context, conn sqlx.QueryerContext, order int64, now time.Time) ([]time.Time, error) {
	const q = `
SELECT d.created_at FROM leads l JOIN dialer_leases d ON d.id = l.lease_id
WHERE l.order_id = $1 AND l.lease_id IS NOT NULL AND l.leased_until > $2`
	out := []time.Time{}
	if err := sqlx.SelectContext(ctx, conn, &out, q, order, now); err != nil {
		return nil, fmt.Errorf("read the calls in flight of order %d: %w", order, err)
	}
	return out, nil
}

// Stats reads the order's dialing figures at now: the minute buckets of the last RecentWindow,
// the hour buckets of the last 24 hours and 30 days (the current hour included), and the latest
// HandleSample handle times.
func (s *Store) Stats(ctx context.Context, order int64, now time.Time) (Stats, error) {
	const q = `
WITH recent AS (
    SELECT coalesce(sum(dialed), 0) AS dialed, coalesce(sum(live), 0) AS live FROM dial_stats_minute
    WHERE order_id = $1 AND bucket > $2::timestamptz - $3::interval AND bucket <= $2),
day AS (
    SELECT coalesce(sum(abandoned), 0) AS abandoned, coalesce(sum(live), 0) AS live FROM dial_stats_hour
    WHERE order_id = $1 AND bucket > $2::timestamptz - interval '24 hours' AND bucket <= $2),
month AS (
    SELECT coalesce(sum(abandoned), 0) AS abandoned, coalesce(sum(live), 0) AS live FROM dial_stats_hour
    WHERE order_id = $1 AND bucket > $2::timestamptz - interval '30 days' AND bucket <= $2)
SELECT recent.dialed AS recent_dialed, recent.live AS recent_live, day.abandoned AS abandoned_24h, day.live AS live_24h,
    month.abandoned AS abandoned_30d, month.live AS live_30d,
    ARRAY(SELECT seconds FROM dial_handle_times WHERE order_id = $1 AND ended_at <= $2 ORDER BY ended_at DESC LIMIT $4) AS handle,
    ARRAY(SELECT answer_seconds FROM dial_handle_times WHERE order_id = $1 AND ended_at <= $2 ORDER BY ended_at DESC LIMIT $4) AS answer
FROM recent, day, month`
	var row struct {
		RecentDialed int64         `db:"recent_dialed"`
		RecentLive   int64         `db:"recent_live"`
		Abandoned24h int64         `db:"abandoned_24h"`
		Live24h      int64         `db:"live_24h"`
		Abandoned30d int64         `db:"abandoned_30d"`
		Live30d      int64         `db:"live_30d"`
		Handle       pq.Int64Array `db:"handle"`
		Answer       pq.Int64Array `db:"answer"`
	}
	window := fmt.Sprintf("%d seconds", int(RecentWindow/time.Second))
	if err := s.conn.GetContext(ctx, &row, q, order, now, window, HandleSample); err != nil {
		return Stats{}, fmt.Errorf("read the dialing statistics of order %d: %w", order, err)
	}
	st := Stats{RecentDialed: row.RecentDialed, RecentLive: row.RecentLive, Abandoned24h: row.Abandoned24h,
		Live24h: row.Live24h, Abandoned30d: row.Abandoned30d, Live30d: row.Live30d,
		HandleTimes: make([]time.Duration, len(row.Handle))}
	for i, sec := range row.Handle {
		st.HandleTimes[i] = time.Duration(sec) * time.Second
	}
	st.AnswerDelays = make([]time.Duration, len(row.Answer))
	for i, sec := range row.Answer {
		st.AnswerDelays[i] = time.Duration(sec) * time.Second
	}
	return st, nil
}

// ExplainQuery is one explain: the order's leads at Now, with the zones open now (Zones, as the
// lease reads them) and those whose window is open if holidays are left aside (Window), and the
// order-level reasons decided before.
type ExplainQuery struct {
	OrderID       int64
	Now           time.Time
	Zones, Window Zones
	AutoDial      bool
	LimitReached  bool
	NoAgent       bool
}

// ExplainRow is one group of leads: those of one offset failing first on one reason.
type ExplainRow struct {
	Reason       string     `db:"reason"`
	UTCOffset    *int       `db:"utc_offset"`
	Count        int64      `db:"n"`
	FirstPlanned *time.Time `db:"first_planned"`
}

// ReasonDue names the leads that fail no rule.
const ReasonDue = "due"

// explainDue names, for each lead of the order, the first rule of the queue it fails, in one pass
// over the order's leads: a CASE over duePredicates (the lease's own rules), with the window
// ($5, $6) before the zone rule, which adds the holidays, and the order-level reasons around them.
var explainDue = func() string {
	var b strings.Builder
	b.WriteString(`
SELECT reason, utc_offset, count(*) AS n, min(planning_call_at) AS first_planned FROM (
    SELECT CASE
        WHEN NOT $7 THEN '` + ReasonAutoDialOff + `'
        WHEN NOT (l.utc_offset = ANY($5::int[]) OR (l.utc_offset IS NULL AND $6)) THEN '` + ReasonOutsideWindow + `'`)
	for _, p := range duePredicates {
		b.WriteString("\n        WHEN NOT " + p.SQL + " THEN '" + p.Reason + "'")
	}
	b.WriteString(`
        WHEN $8 THEN '` + ReasonDailyLimit + `'
        WHEN $9 THEN '` + ReasonNoAgent + `'
        ELSE '` + ReasonDue + `' END AS reason, l.utc_offset, l.planning_call_at
    FROM leads l WHERE l.order_id = $1
) x GROUP BY reason, utc_offset`)
	return b.String()
}()

// Explain groups the order's leads by the first rule each fails.
func (s *Store) Explain(ctx context.Context, q ExplainQuery) ([]ExplainRow, error) {
	var rows []ExplainRow
	if err := s.conn.SelectContext(ctx, &rows, explainDue, q.OrderID, q.Now, offsetsOf(q.Zones), q.Zones.Unknown,
		offsetsOf(q.Window), q.Window.Unknown, q.AutoDial, q.LimitReached, q.NoAgent); err != nil {
		return nil, fmt.Errorf("explain the queue of order %d: %w", q.OrderID, err)
	}
	return rows, nil
}

func offsetsOf(z Zones) pq.Int64Array {
	out := make(pq.Int64Array, len(z.Offsets))
	for i, o := range z.Offsets {
		out[i] = int64(o)
	}
	return out
}
