package callresult

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
)

// Tally is what one finished call adds to its order's dialing statistics (the dialer's pace and
// the pacer read them: services/lead/README.md, "Paced lease").
type Tally struct {
	Dialed, Live, Abandoned, Handled int
	// HandleSeconds is the talk time of a handled call (wrap-up is not known here).
	HandleSeconds int64
}

// TallyOf is the tally of call ev: only outgoing calls count (the platform's dialers placed
// them). A call is live when a person picked up (answered, or abandoned: answered with no agent);
// an answered call an agent talked on is handled, its handle time being its talk time. ok is false
// for a call that adds nothing.
func TallyOf(ev Finished) (Tally, bool) {
	if !ev.Outgoing {
		return Tally{}, false
	}
	t := Tally{Dialed: 1}
	switch {
	case ev.Outcome == OutcomeAbandoned:
		t.Live, t.Abandoned = 1, 1
	case ev.Outcome == OutcomeAnswered && ev.Answered:
		t.Live, t.Handled, t.HandleSeconds = 1, 1, ev.TalkSeconds
	}
	return t, true
}

// LockoutUntil is until when call ev keeps its number out of the queue: an abandoned call, for
// the order's DropLockout from its end. ok is false when it sets no lockout.
func LockoutUntil(ev Finished, r Rules) (time.Time, bool) {
	if ev.Outcome != OutcomeAbandoned || r.DropLockout <= 0 {
		return time.Time{}, false
	}
	return ev.EndedAt.Add(r.DropLockout), true
}

// statRow is one bucket's increment, as one element of the upsert's JSON.
type statRow struct {
	OrderID       int64     `json:"order_id"`
	Bucket        time.Time `json:"bucket"`
	Dialed        int       `json:"dialed"`
	Live          int       `json:"live"`
	Abandoned     int       `json:"abandoned"`
	Handled       int       `json:"handled"`
	HandleSeconds int64     `json:"handle_seconds"`
}

// handleRow is one handle time.
type handleRow struct {
	OrderID int64     `json:"order_id"`
	EndedAt time.Time `json:"ended_at"`
	Seconds int64     `json:"seconds"`
	// AnswerSeconds is how long the person took to answer (the pacer's answer delays).
	AnswerSeconds int64 `json:"answer_seconds"`
}

// bucketsOf sums the tallies of the applied events per order and bucket (the event's end cut to
// size), sorted by key so that concurrent transactions lock the rows in one order.
func bucketsOf(events []Finished, size time.Duration) []statRow {
	byKey := map[[2]int64]*statRow{}
	for _, ev := range events {
		t, ok := TallyOf(ev)
		if !ok {
			continue
		}
		b := ev.EndedAt.Truncate(size)
		k := [2]int64{ev.OrderID, b.Unix()}
		r := byKey[k]
		if r == nil {
			r = &statRow{OrderID: ev.OrderID, Bucket: b}
			byKey[k] = r
		}
		r.Dialed += t.Dialed
		r.Live += t.Live
		r.Abandoned += t.Abandoned
		r.Handled += t.Handled
		r.HandleSeconds += t.HandleSeconds
	}
	out := make([]statRow, 0, len(byKey))
	for _, r := range byKey {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b statRow) int {
		if a.OrderID != b.OrderID {
			return int(a.OrderID - b.OrderID)
		}
		return a.Bucket.Compare(b.Bucket)
	})
	return out
}

// recordStats adds the applied events to their orders' statistics, in the transaction that
// records them: an event seen again is a duplicate and never reaches here.
func recordStats(ctx context.Context, tx *sqlx.Tx, applied []Finished) error {
	for _, t := range []struct {
		table string
		size  time.Duration
	}{{"dial_stats_minute", time.Minute}, {"dial_stats_hour", time.Hour}} {
		rows := bucketsOf(applied, t.size)
		if len(rows) == 0 {
			continue
		}
		body, err := json.Marshal(rows)
		if err != nil {
			return fmt.Errorf("encode dialing statistics: %w", err)
		}
		q := `
INSERT INTO ` + t.table + ` AS s (order_id, bucket, dialed, live, abandoned, handled, handle_seconds)
SELECT order_id, bucket, dialed, live, abandoned, handled, handle_seconds
FROM jsonb_to_recordset($1::jsonb) AS v(order_id bigint, bucket timestamptz, dialed int, live int, abandoned int,
    handled int, handle_seconds bigint)
ON CONFLICT (order_id, bucket) DO UPDATE SET dialed = s.dialed + excluded.dialed, live = s.live + excluded.live,
    abandoned = s.abandoned + excluded.abandoned, handled = s.handled + excluded.handled,
    handle_seconds = s.handle_seconds + excluded.handle_seconds`
		if _, err := tx.ExecContext(ctx, q, string(body)); err != nil {
			return fmt.Errorf("record dialing statistics: %w", err)
		}
	}
	var handles []handleRow
	for _, ev := range applied {
		if t, ok := TallyOf(ev); ok && t.Handled > 0 {
			handles = append(handles, handleRow{OrderID: ev.OrderID, EndedAt: ev.EndedAt, Seconds: t.HandleSeconds, AnswerSeconds: ev.WaitSeconds})
		}
	}
	if len(handles) == 0 {
		return nil
	}
	body, err := json.Marshal(handles)
	if err != nil {
		return fmt.Errorf("encode handle times: %w", err)
	}
	const q = `
INSERT INTO dial_handle_times (order_id, ended_at, seconds, answer_seconds)
SELECT order_id, ended_at, seconds, answer_seconds
FROM jsonb_to_recordset($1::jsonb) AS v(order_id bigint, ended_at timestamptz, seconds int, answer_seconds int)`
	if _, err := tx.ExecContext(ctx, q, string(body)); err != nil {
		return fmt.Errorf("record handle times: %w", err)
	}
	return nil
}

// How long the dialing statistics are kept: the minute buckets serve the last hour, the hour
// buckets the 30-day window, the handle times the latest sample.
const (
	keepMinutes     = 24 * time.Hour
	keepHours       = 31 * 24 * time.Hour
	keepHandleTimes = 7 * 24 * time.Hour
)

// PurgeStats deletes the statistics no read needs any more, older than their keep at now, and
// returns how many rows went.
func (s *Store) PurgeStats(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for _, p := range []struct {
		q    string
		keep time.Duration
	}{
		{`DELETE FROM dial_stats_minute WHERE bucket < $1`, keepMinutes},
		{`DELETE FROM dial_stats_hour WHERE bucket < $1`, keepHours},
		{`DELETE FROM dial_handle_times WHERE ended_at < $1`, keepHandleTimes},
	} {
		res, err := s.conn.ExecContext(ctx, p.q, now.Add(-p.keep))
		if err != nil {
			return total, fmt.Errorf("purge dialing statistics: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

// PurgeStatsHourly runs PurgeStats every hour until ctx is done (a task of lead-worker).
func (s *Store) PurgeStatsHourly(ctx context.Context, log func(error)) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if _, err := s.PurgeStats(ctx, now); err != nil && ctx.Err() == nil {
				log(err)
			}
		}
	}
}
