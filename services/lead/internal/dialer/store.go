package dialer

import (
	"context"
	"fmt"
	"slices"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/services/lead/internal/lead"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store runs the queue's statements on the leads table.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the lead service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Leased is a lead as a lease hands it out.
type Leased struct {
	ID             int64             `db:"id"`
	Phone          string            `db:"phone"`
	Name           *string           `db:"name"`
	UTCOffset      *int64            `db:"utc_offset"`
	Priority       int64             `db:"priority"`
	Attempts       int64             `db:"attempts"`
	StatusID       int64             `db:"status_id"`
	PlanningCallAt *time.Time        `db:"planning_call_at"`
	CustomValues   lead.CustomValues `db:"custom_values"`
	// HasRepeats: other leads share the phone (a secondary lead, or a primary with a next one).
	HasRepeats bool `db:"has_repeats"`
}

// takenElsewhere gives back the leads of this lease ($1) with repeats whose phone another lease
// holds a lead of.
const takenElsewhere = `
UPDATE leads SET lease_id = NULL, leased_until = NULL
WHERE lease_id = $1 AND (is_secondary OR next_lead_id IS NOT NULL)
  AND EXISTS (SELECT 1 FROM leads o WHERE o.order_id = leads.order_id AND o.phone = leads.phone
      AND o.id <> leads.id AND o.leased_until > $2 AND o.lease_id IS DISTINCT FROM $1)
RETURNING id`

// phoneLockSpace is the first key of the leases' advisory locks on a phone (ASCII "dial"): the
// two-key form never meets the one-key locks that migrations take.
const phoneLockSpace = "1684627820"

// LeaseQuery is one lease: up to Limit due leads of OrderID at Now in Zones, held by LeaseID
// until Until.
type LeaseQuery struct {
	OrderID  int64
	Now      time.Time
	Zones    Zones
	Limit    int
	LeaseID  string
	Until    time.Time
	DialerID string
	By       *int64
	// Pace, for a paced lease, decides the limit from the order's calls in flight, read in the
	// lease's transaction under a lock of the order's paced leases (nil: Limit).
	Pace func(inFlight []time.Time) int
}

// paceLockSpace is the first key of the paced leases' advisory lock on an order (ASCII "pace").
const paceLockSpace = "1885430629"

// leaseDue is the lease's one statement, its rules those of duePredicates. The due leads are read from leads_dial_queue in lease
// order (priority, planned time with unplanned leads first, id); a lead without a planned time is
// due only if it was never called (after a call, no next call means "do not dial"), which is also
// the index's predicate, repeated so the planner can use the index. A lead whose number an
// abandoned call locked out is skipped until its lockout_until. Each is locked as it is read:
// FOR UPDATE SKIP LOCKED passes over the leads another lease is taking at this moment, and a lead
// another lease took and committed since this statement began is re-checked (READ COMMITTED) and
// no longer qualifies, as its lease is not expired. So two leases never hand out the same lead.
// A lead is skipped while another lead of its phone in the order is leased (a secondary lead and
// its primary are never dialed at once) and while the phone is on the do-not-call list. Only a
// lead with repeats (is_secondary, or a next_lead_id) looks for its phone's other leads: inside an
// OR the check stays a probe of leads_order_phone per such lead, where as a plain NOT EXISTS the
// planner may join the order's every leased lead by a scan of the table.
//
// The check of the phone's other leads cannot see a lease another statement is taking at this
// moment (not committed yet), so a lead with repeats also takes a transaction-scoped advisory lock
// on its order and phone: a concurrent lease that meets another lead of that phone fails to take it
// and passes the lead over, and once the first lease commits, its lease is what the check sees.
var leaseDue = `
WITH due AS (
    SELECT l.id FROM leads l
    WHERE l.order_id = $1
      AND ` + dueWhere() + `
      AND (NOT (l.is_secondary OR l.next_lead_id IS NOT NULL)
          OR (NOT EXISTS (SELECT 1 FROM leads o WHERE o.order_id = l.order_id AND o.phone = l.phone AND o.id <> l.id
              AND o.leased_until > $2)
            AND pg_try_advisory_xact_lock(` + phoneLockSpace + `, hashtext(l.order_id::text || l.phone))))
    ORDER BY l.priority DESC, l.planning_call_at ASC NULLS FIRST, l.id
    LIMIT $5
    FOR UPDATE OF l SKIP LOCKED
)
UPDATE leads SET lease_id = $6, leased_until = $7 FROM due WHERE leads.id = due.id
RETURNING leads.id, leads.phone, leads.name, leads.utc_offset, leads.priority, leads.attempts, leads.status_id,
    leads.planning_call_at, leads.custom_values, (leads.is_secondary OR leads.next_lead_id IS NOT NULL) AS has_repeats`

// leaseRounds bounds the statements one lease runs: a round that gave leads back (a repeated
// phone, or a phone another lease holds) is followed by one for the shortfall.
const leaseRounds = 3

// Lease hands out the due leads of q in lease order, in one transaction with the lease's record.
// Of several leads of one phone that the statement found together, only the first is kept. The
// leads given back are made up for by another round, so an answer comes back short only when
// fewer leads are due (or other leases are taking them at this moment), not because a check gave
// some back: a dialer that reads an empty answer as "nothing due" is not misled.
func (s *Store) Lease(ctx context.Context, q LeaseQuery) ([]Leased, error) {
	var out []Leased
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		out = nil
		limit := q.Limit
		if q.Pace != nil {
			// Paced leases of one order take turns from here to their commit: each counts the
			// calls in flight with the leads of the one before, so concurrent dialers together
			// dial what one decision allows, not that many times over.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+paceLockSpace+`, ($1 % 2147483647)::int)`, q.OrderID); err != nil {
				return fmt.Errorf("lock the paced leases of order %d: %w", q.OrderID, err)
			}
			inFlight, err := inFlightOf(ctx, tx, q.OrderID, q.Now)
			if err != nil {
				return err
			}
			if limit = min(q.Pace(inFlight), MaxLimit); limit <= 0 {
				return nil
			}
		}
		offsets := make(pq.Int64Array, len(q.Zones.Offsets))
		for i, o := range q.Zones.Offsets {
			offsets[i] = int64(o)
		}
		var kept []Leased
		for range leaseRounds {
			var rows []Leased
			if err := tx.SelectContext(ctx, &rows, leaseDue, q.OrderID, q.Now, offsets, q.Zones.Unknown,
				limit-len(kept), q.LeaseID, q.Until); err != nil {
				return fmt.Errorf("lease leads of order %d: %w", q.OrderID, err)
			}
			if len(rows) == 0 {
				break
			}
			var gaveBack bool
			var err error
			if kept, gaveBack, err = s.onePerPhone(ctx, tx, q, append(kept, rows...)); err != nil {
				return err
			}
			if !gaveBack || len(kept) >= limit {
				break
			}
		}
		if len(kept) == 0 {
			return nil
		}
		const record = `INSERT INTO dialer_leases (id, order_id, dialer_id, leased_by, expires_at) VALUES ($1, $2, $3, $4, $5)`
		if _, err := tx.ExecContext(ctx, record, q.LeaseID, q.OrderID, q.DialerID, q.By, q.Until); err != nil {
			return fmt.Errorf("record lease: %w", err)
		}
		out = kept
		return nil
	})
	return out, err
}

// onePerPhone gives back, of the leads the lease holds in tx, those of a phone it holds twice and
// those of a phone another lease holds, and returns the others in lease order.
func (s *Store) onePerPhone(ctx context.Context, tx *sqlx.Tx, q LeaseQuery, held []Leased) ([]Leased, bool, error) {
	SortByQueue(held)
	kept, extra := OnePerPhone(held)
	if len(extra) > 0 {
		const giveBack = `UPDATE leads SET lease_id = NULL, leased_until = NULL WHERE id = ANY($1)`
		if _, err := tx.ExecContext(ctx, giveBack, pq.Int64Array(extra)); err != nil {
			return nil, false, fmt.Errorf("give back repeated phones: %w", err)
		}
	}
	// The statement's check of a phone's other leads read its snapshot; the advisory lock made a
	// concurrent lease of that phone commit first, so a fresh look now sees it.
	if !slices.ContainsFunc(kept, func(l Leased) bool { return l.HasRepeats }) {
		return kept, len(extra) > 0, nil
	}
	var taken []int64
	if err := tx.SelectContext(ctx, &taken, takenElsewhere, q.LeaseID, q.Now); err != nil {
		return nil, false, fmt.Errorf("give back phones leased elsewhere: %w", err)
	}
	kept = slices.DeleteFunc(kept, func(l Leased) bool { return slices.Contains(taken, l.ID) })
	return kept, len(extra)+len(taken) > 0, nil
}

// SortByQueue puts leads in lease order: priority descending, planned time ascending with
// unplanned leads first, id.
func SortByQueue(leads []Leased) {
	slices.SortFunc(leads, func(a, b Leased) int {
		if a.Priority != b.Priority {
			if a.Priority > b.Priority {
				return -1
			}
			return 1
		}
		switch {
		case a.PlanningCallAt == nil && b.PlanningCallAt != nil:
			return -1
		case a.PlanningCallAt != nil && b.PlanningCallAt == nil:
			return 1
		case a.PlanningCallAt != nil:
			if c := a.PlanningCallAt.Compare(*b.PlanningCallAt); c != 0 {
				return c
			}
		}
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

// OnePerPhone keeps the first lead of each phone (leads in lease order) and names the others.
func OnePerPhone(leads []Leased) (kept []Leased, extra []int64) {
	seen := make(map[string]bool, len(leads))
	kept = make([]Leased, 0, len(leads))
	for _, l := range leads {
		if seen[l.Phone] {
			extra = append(extra, l.ID)
			continue
		}
		seen[l.Phone] = true
		kept = append(kept, l)
	}
	return kept, extra
}

// LeaseOrder is the order a lease was taken in; an unknown lease is NotFound.
func (s *Store) LeaseOrder(ctx context.Context, leaseID string) (int64, error) {
	var order int64
	err := s.conn.GetContext(ctx, &order, `SELECT order_id FROM dialer_leases WHERE id = $1`, leaseID)
	if db.IsNoRows(err) {
		return 0, apperr.NotFoundf("lease %s does not exist", leaseID)
	}
	if err != nil {
		return 0, fmt.Errorf("read lease %s: %w", leaseID, err)
	}
	return order, nil
}

// Release gives the lease's leads back (ids nil: all it still holds) and returns their ids.
func (s *Store) Release(ctx context.Context, leaseID string, ids []int64) ([]int64, error) {
	const q = `
UPDATE leads SET lease_id = NULL, leased_until = NULL
WHERE lease_id = $1 AND ($2::bigint[] IS NULL OR id = ANY($2))
RETURNING id`
	var arg any
	if ids != nil {
		arg = pq.Int64Array(ids)
	}
	released := []int64{}
	if err := s.conn.SelectContext(ctx, &released, q, leaseID, arg); err != nil {
		return nil, fmt.Errorf("release lease %s: %w", leaseID, err)
	}
	slices.Sort(released)
	return released, nil
}

// Extend holds the leads the lease still holds at now (not expired, not taken back) until until,
// and returns their ids.
func (s *Store) Extend(ctx context.Context, leaseID string, now, until time.Time) ([]int64, error) {
	extended := []int64{}
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		const q = `UPDATE leads SET leased_until = $3 WHERE lease_id = $1 AND leased_until > $2 RETURNING id`
		extended = extended[:0]
		if err := tx.SelectContext(ctx, &extended, q, leaseID, now, until); err != nil {
			return fmt.Errorf("extend lease %s: %w", leaseID, err)
		}
		if len(extended) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE dialer_leases SET expires_at = $2 WHERE id = $1`, leaseID, until); err != nil {
			return fmt.Errorf("record extended lease %s: %w", leaseID, err)
		}
		return nil
	})
	slices.Sort(extended)
	return extended, err
}

// QualifiedOn counts the order's leads whose status became a success status (qualified) within
// [from, to) through the update API.
func (s *Store) QualifiedOn(ctx context.Context, orderID int64, success []int64, from, to time.Time) (int64, error) {
	const q = `
SELECT count(*) FROM leads
WHERE order_id = $1 AND status_changed_at >= $2 AND status_changed_at < $3 AND status_id = ANY($4)`
	var n int64
	if err := s.conn.GetContext(ctx, &n, q, orderID, from, to, pq.Int64Array(success)); err != nil {
		return 0, fmt.Errorf("count qualified leads of order %d: %w", orderID, err)
	}
	return n, nil
}
