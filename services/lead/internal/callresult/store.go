package callresult

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/lead"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store applies call results to the leads table and records every event it handled, and the
// lead.status_changed events of the statuses it changed.
type Store struct {
	conn     *sqlx.DB
	statuses *catalog.Store
}

// NewStore writes through conn and reads status codes and categories from statuses.
func NewStore(conn *sqlx.DB, statuses *catalog.Store) *Store {
	return &Store{conn: conn, statuses: statuses}
}

// Item is one event on its way into the store: with its order's rules, or with the reason it is
// skipped whatever the lead (its order does not exist).
type Item struct {
	Event Finished
	Rules Rules
	Skip  string
}

// Kinds of Result.
const (
	// Applied: the lead was updated.
	Applied = "applied"
	// Skipped: recorded with the reason, the lead untouched.
	Skipped = "skipped"
	// Duplicate: an earlier delivery of the event (or another event about the call) was handled.
	Duplicate = "duplicate"
)

// Result is what became of one Item.
type Result struct {
	Kind   string
	Reason string
	// Change is what an applied event did to its lead.
	Change Change
}

// errRaced is a concurrent transaction recording the same event first; retried, the event is then
// seen as a duplicate.
var errRaced = errors.New("call results: an event was recorded concurrently")

// leadRow is the part of a lead the rules read and write.
type leadRow struct {
	ID              int64      `db:"id"`
	OrderID         int64      `db:"order_id"`
	StatusID        int64      `db:"status_id"`
	Attempts        int        `db:"attempts"`
	UTCOffset       *int       `db:"utc_offset"`
	PlanningCallAt  *time.Time `db:"planning_call_at"`
	LastCallEndedAt *time.Time `db:"last_call_ended_at"`
}

// record is one row of lead_call_results.
type record struct {
	EventID string     `json:"event_id"`
	CallID  int64      `json:"call_id"`
	LeadID  int64      `json:"lead_id"`
	OrderID int64      `json:"order_id"`
	Outcome string     `json:"outcome"`
	Reason  *string    `json:"reason"`
	UserID  *int64     `json:"user_id"`
	EndedAt *time.Time `json:"ended_at"`
}

// leadUpdate is the new state of a lead, as one element of the update's JSON.
type leadUpdate struct {
	ID              int64      `json:"id"`
	Attempts        int        `json:"attempts"`
	StatusID        int64      `json:"status_id"`
	PlanningCallAt  *time.Time `json:"planning_call_at"`
	LastCallEndedAt *time.Time `json:"last_call_ended_at"`
	// EndLease gives the lead back from the dialer that leased it (internal/dialer): its call is
	// over, and the rules have set when it is due again.
	EndLease bool `json:"end_lease"`
	// LockoutUntil keeps an abandoned number out of the queue (nil: no new lockout; a later
	// lockout already set is kept).
	LockoutUntil *time.Time `json:"lockout_until"`
}

// Apply handles items in one transaction and returns one Result per item, in order. The leads
// are locked first, so events of the same lead handled concurrently are applied one after the
// other, and a duplicate is seen as one once the lock is granted.
func (s *Store) Apply(ctx context.Context, items []Item) ([]Result, error) {
	now := time.Now()
	statuses, err := s.statuses.Statuses(ctx)
	if err != nil {
		return nil, err
	}
	byCode := make(map[string]catalog.Status, len(statuses))
	for _, st := range statuses {
		byCode[st.Code] = st
	}
	var results []Result
	err = db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		results = make([]Result, len(items))
		leads, err := lockLeads(ctx, tx, items)
		if err != nil {
			return err
		}
		before := statusesOf(leads)
		done, err := handled(ctx, tx, items)
		if err != nil {
			return err
		}
		var records []record
		// changed maps each updated lead to whether a call of its ended its lease (a late call,
		// older than one already applied, leaves the current lease alone).
		changed := map[int64]bool{}
		lockouts := map[int64]time.Time{}
		var applied []Finished
		// Calls of one lead within the batch are applied in the order they ended.
		order := make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return items[a].Event.EndedAt.Compare(items[b].Event.EndedAt)
		})
		for _, i := range order {
			it := items[i]
			ev := it.Event
			if done.has(ev) {
				results[i] = Result{Kind: Duplicate}
				continue
			}
			done.add(ev)
			l, found := leads[ev.LeadID]
			switch {
			case it.Skip != "":
				results[i] = Result{Kind: Skipped, Reason: it.Skip}
			case !found:
				results[i] = Result{Kind: Skipped, Reason: fmt.Sprintf("lead %d does not exist", ev.LeadID)}
			case l.OrderID != ev.OrderID:
				results[i] = Result{Kind: Skipped, Reason: fmt.Sprintf("lead %d belongs to order %d, not %d", ev.LeadID, l.OrderID, ev.OrderID)}
			default:
				ch := applyTo(l, ev, it.Rules, statuses, byCode, now)
				results[i] = Result{Kind: Applied, Change: ch}
				changed[l.ID] = changed[l.ID] || !ch.Late
				applied = append(applied, ev)
				if until, ok := LockoutUntil(ev, it.Rules); ok && until.After(lockouts[l.ID]) {
					lockouts[l.ID] = until
				}
			}
			rec := record{EventID: ev.EventID, CallID: ev.CallID, LeadID: ev.LeadID, OrderID: ev.OrderID, Outcome: results[i].Kind,
				EndedAt: &ev.EndedAt}
			if ev.UserID > 0 {
				rec.UserID = &ev.UserID
			}
			if r := results[i].Reason; r != "" {
				rec.Reason = &r
			}
			records = append(records, rec)
		}
		var updates []leadUpdate
		for id, endLease := range changed {
			l := leads[id]
			u := leadUpdate{ID: l.ID, Attempts: l.Attempts, StatusID: l.StatusID,
				PlanningCallAt: l.PlanningCallAt, LastCallEndedAt: l.LastCallEndedAt, EndLease: endLease}
			if until, ok := lockouts[id]; ok {
				u.LockoutUntil = &until
			}
			updates = append(updates, u)
		}
		if err := updateLeads(ctx, tx, updates); err != nil {
			return err
		}
		if err := recordStats(ctx, tx, applied); err != nil {
			return err
		}
		if err := lead.RecordStatusChanges(ctx, tx, statusChanges(before, leads)); err != nil {
			return err
		}
		return recordResults(ctx, tx, records)
	})
	if err != nil {
		return nil, fmt.Errorf("apply call results: %w", err)
	}
	return results, nil
}

// applyTo runs the rules on l (updated in place, so that the next call of the same lead in the
// batch starts from it) and returns the change.
func applyTo(l *leadRow, ev Finished, r Rules, statuses catalog.Statuses, byCode map[string]catalog.Status, now time.Time) Change {
	current := statuses[l.StatusID]
	ch := Apply(Lead{
		StatusCode:      current.Code,
		Final:           current.Category == catalog.CategorySuccess || current.Category == catalog.CategoryFailure,
		Attempts:        l.Attempts,
		UTCOffset:       l.UTCOffset,
		PlanningCallAt:  l.PlanningCallAt,
		LastCallEndedAt: TrustedLastCall(l.LastCallEndedAt, now),
	}, Call{Outcome: ev.Outcome, EndedAt: ev.EndedAt}, r)
	l.Attempts, l.PlanningCallAt, l.LastCallEndedAt = ch.Attempts, ch.NextCallAt, ch.LastCallEndedAt
	// A status missing from the catalog (removed by hand) leaves the lead's status as it is.
	if st, ok := byCode[ch.StatusCode]; ok {
		l.StatusID = st.ID
	}
	return ch
}

// statusesOf is each lead's status id, by lead id.
func statusesOf(leads map[int64]*leadRow) map[int64]int64 {
	out := make(map[int64]int64, len(leads))
	for id, l := range leads {
		out[id] = l.StatusID
	}
	return out
}

// statusChanges maps each lead whose status the batch changed to its status before (before): the
// net change of the transaction, so calls that moved a lead away and back announce nothing.
func statusChanges(before map[int64]int64, leads map[int64]*leadRow) map[int64]int64 {
	out := map[int64]int64{}
	for id, l := range leads {
		if l.StatusID != before[id] {
			out[id] = before[id]
		}
	}
	return out
}

// lockLeads reads and locks the leads the items name, in id order so that concurrent batches
// cannot deadlock.
func lockLeads(ctx context.Context, tx *sqlx.Tx, items []Item) (map[int64]*leadRow, error) {
	const q = `
SELECT id, order_id, status_id, attempts, utc_offset, planning_call_at, last_call_ended_at
FROM leads WHERE id = ANY($1) ORDER BY id FOR UPDATE`
	var ids []int64
	for _, it := range items {
		if it.Skip == "" {
			ids = append(ids, it.Event.LeadID)
		}
	}
	out := map[int64]*leadRow{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []leadRow
	if err := tx.SelectContext(ctx, &rows, q, pq.Int64Array(ids)); err != nil {
		return nil, fmt.Errorf("lock leads: %w", err)
	}
	for i := range rows {
		out[rows[i].ID] = &rows[i]
	}
	return out, nil
}

// seen holds the events handled so far: by event id, and by call for another event about a call.
type seen struct {
	events map[string]bool
	calls  map[int64]bool
}

func (s seen) has(ev Finished) bool { return s.events[ev.EventID] || s.calls[ev.CallID] }

func (s seen) add(ev Finished) { s.events[ev.EventID], s.calls[ev.CallID] = true, true }

// handled is the set of the items' events already recorded.
func handled(ctx context.Context, tx *sqlx.Tx, items []Item) (seen, error) {
	const q = `SELECT event_id, call_id FROM lead_call_results WHERE event_id = ANY($1) OR call_id = ANY($2)`
	events := make([]string, len(items))
	calls := make([]int64, len(items))
	for i, it := range items {
		events[i], calls[i] = it.Event.EventID, it.Event.CallID
	}
	var rows []struct {
		EventID string `db:"event_id"`
		CallID  int64  `db:"call_id"`
	}
	if err := tx.SelectContext(ctx, &rows, q, pq.StringArray(events), pq.Int64Array(calls)); err != nil {
		return seen{}, fmt.Errorf("read handled call events: %w", err)
	}
	done := seen{events: map[string]bool{}, calls: map[int64]bool{}}
	for _, r := range rows {
		done.events[r.EventID], done.calls[r.CallID] = true, true
	}
	return done, nil
}

// updateLeads writes the new state of the leads in one statement. The rows travel as JSON text:
// the driver would send a []byte in binary, which jsonb does not read.
func updateLeads(ctx context.Context, tx *sqlx.Tx, updates []leadUpdate) error {
	const q = `
UPDATE leads l SET attempts = v.attempts, status_id = v.status_id, planning_call_at = v.planning_call_at,
    last_call_ended_at = v.last_call_ended_at, updated_at = now(),
    lease_id = CASE WHEN v.end_lease THEN NULL ELSE l.lease_id END,
    leased_until = CASE WHEN v.end_lease THEN NULL ELSE l.leased_until END,
    lockout_until = GREATEST(l.lockout_until, v.lockout_until)
FROM jsonb_to_recordset($1::jsonb) AS v(id bigint, attempts int, status_id int, planning_call_at timestamptz, last_call_ended_at timestamptz,
    end_lease boolean, lockout_until timestamptz)
WHERE l.id = v.id`
	if len(updates) == 0 {
		return nil
	}
	body, err := json.Marshal(updates)
	if err != nil {
		return fmt.Errorf("encode lead updates: %w", err)
	}
	if _, err := tx.ExecContext(ctx, q, string(body)); err != nil {
		return fmt.Errorf("update leads: %w", err)
	}
	return nil
}

// recordResults stores the handled events. Rows go in event id order so that two transactions
// recording overlapping events wait for each other instead of deadlocking.
func recordResults(ctx context.Context, tx *sqlx.Tx, records []record) error {
	const q = `
INSERT INTO lead_call_results (event_id, call_id, lead_id, order_id, outcome, reason, user_id, ended_at)
SELECT event_id, call_id, lead_id, order_id, outcome, reason, user_id, ended_at
FROM jsonb_to_recordset($1::jsonb) AS v(event_id text, call_id bigint, lead_id bigint, order_id bigint, outcome text, reason text,
    user_id bigint, ended_at timestamptz)
ORDER BY event_id
ON CONFLICT DO NOTHING
RETURNING event_id`
	if len(records) == 0 {
		return nil
	}
	body, err := json.Marshal(records)
	if err != nil {
		return fmt.Errorf("encode call results: %w", err)
	}
	var stored []string
	if err := tx.SelectContext(ctx, &stored, q, string(body)); err != nil {
		return fmt.Errorf("record call results: %w", err)
	}
	if len(stored) != len(records) {
		return errRaced
	}
	return nil
}
