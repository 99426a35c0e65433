package delivery

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store keeps events, deliveries and their attempts.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the webhook schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Queued is an event to record with the subscriptions it is owed to.
type Queued struct {
	ID, Type string
	Body     []byte
	To       []int64
}

// EnqueueAll records events and one pending delivery of each to each of its subscriptions, due at
// now, inside tx, with two statements whatever the number. An event or delivery already recorded
// (the broker redelivered the event) is left as it is.
func EnqueueAll(ctx context.Context, tx *sqlx.Tx, events []Queued, now time.Time) error {
	ids, types := make(pq.StringArray, len(events)), make(pq.StringArray, len(events))
	bodies := make(pq.ByteaArray, len(events))
	var subs pq.Int64Array
	var of pq.StringArray
	for i, e := range events {
		ids[i], types[i], bodies[i] = e.ID, e.Type, e.Body
		for _, s := range e.To {
			subs, of = append(subs, s), append(of, e.ID)
		}
	}
	const ev = `
INSERT INTO events (id, type, body, received_at)
SELECT i, t, b, $4 FROM unnest($1::text[], $2::text[], $3::bytea[]) AS e(i, t, b)
ON CONFLICT (id) DO NOTHING`
	if _, err := tx.ExecContext(ctx, ev, ids, types, bodies, now); err != nil {
		return fmt.Errorf("record %d events: %w", len(events), err)
	}
	const dl = `
INSERT INTO deliveries (subscription_id, event_id, next_attempt_at, created_at)
SELECT s, e, $3, $3 FROM unnest($1::bigint[], $2::text[]) AS d(s, e)
ON CONFLICT (subscription_id, event_id) DO NOTHING`
	if _, err := tx.ExecContext(ctx, dl, subs, of, now); err != nil {
		return fmt.Errorf("record deliveries of %d events: %w", len(events), err)
	}
	return nil
}

// Due is a delivery a dispatcher claimed, with what it needs to send it.
type Due struct {
	ID             int64      `db:"id"`
	SubscriptionID int64      `db:"subscription_id"`
	EventID        string     `db:"event_id"`
	Attempts       int        `db:"attempts"`
	FirstAttemptAt *time.Time `db:"first_attempt_at"`
	URL            string     `db:"url"`
	Secret         string     `db:"secret"`
	PreviousSecret *string    `db:"previous_secret"`
	PreviousUntil  *time.Time `db:"previous_secret_until"`
	Body           []byte     `db:"body"`
}

// Secrets sign the attempt at now: the current one, and the previous one during its overlap.
func (d Due) Secrets(now time.Time) []string {
	out := []string{d.Secret}
	if d.PreviousSecret != nil && d.PreviousUntil != nil && now.Before(*d.PreviousUntil) {
		out = append(out, *d.PreviousSecret)
	}
	return out
}

// DefaultClaimFor is how long a claimed delivery is held: past it, a dispatcher that died holding
// it no longer keeps it from the others. It exceeds an attempt's timeout by a wide margin.
const DefaultClaimFor = time.Minute

// Claim takes up to limit due deliveries of enabled subscriptions at now, at most perEndpoint of
// each endpoint and none of the endpoints in busy (those at their concurrency already), earliest
// due first, and holds them until now+hold. The rank per endpoint keeps one endpoint's backlog from
// filling the claim.
func (s *Store) Claim(ctx context.Context, now time.Time, hold time.Duration, limit, perEndpoint int, busy []int64) ([]Due, error) {
	const q = `
WITH candidates AS (
    SELECT d.id, d.subscription_id, d.next_attempt_at
    FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id AND s.enabled
    WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND (d.claimed_until IS NULL OR d.claimed_until <= $1)
      AND d.subscription_id <> ALL($4)
    ORDER BY d.next_attempt_at LIMIT $6
), ranked AS (
    SELECT id, row_number() OVER (PARTITION BY subscription_id ORDER BY next_attempt_at, id) AS rank FROM candidates
), picked AS (
    SELECT d.id FROM deliveries d JOIN ranked r ON r.id = d.id
    WHERE r.rank <= $3 AND d.state = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until <= $1)
    ORDER BY d.next_attempt_at, d.id LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
), claimed AS (
    UPDATE deliveries d SET claimed_until = $5 FROM picked WHERE d.id = picked.id
    RETURNING d.id, d.subscription_id, d.event_id, d.attempts, d.first_attempt_at
)
SELECT c.id, c.subscription_id, c.event_id, c.attempts, c.first_attempt_at, s.url, s.secret, s.previous_secret,
    s.previous_secret_until, e.body
FROM claimed c JOIN subscriptions s ON s.id = c.subscription_id JOIN events e ON e.id = c.event_id`
	out := []Due{}
	if busy == nil {
		busy = []int64{}
	}
	// The earliest due of the free endpoints are ranked, not every due delivery: a backlog costs a
	// claim no more than a few batches' worth of rows.
	candidates := limit * 20
	if err := s.conn.SelectContext(ctx, &out, q, now, limit, perEndpoint, pq.Int64Array(busy), now.Add(hold), candidates); err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return out, nil
}

// Result is the end of one attempt as the store records it.
type Result struct {
	Due     Due
	At      time.Time
	Outcome Outcome
	// Next is when to try again; zero with Outcome not OK: the retries are spent.
	Next time.Time
}

// RecordAll writes the results of attempts in one transaction: each attempt in the log, each
// delivery's new state, and each endpoint's health (failing since when). When a failure disabled
// an endpoint, notify queues the word to its owner inside the same transaction.
func (s *Store) RecordAll(ctx context.Context, rs []Result, notify Notify) error {
	n := len(rs)
	ids, nums, statuses, latencies := make(pq.Int64Array, n), make(pq.Int64Array, n), make([]sql.NullInt64, n), make(pq.Int64Array, n)
	ats, nexts := make(pq.StringArray, n), make([]sql.NullString, n)
	states, errs, excerpts := make(pq.StringArray, n), make(pq.StringArray, n), make(pq.StringArray, n)
	for i, r := range rs {
		o := r.Outcome
		ids[i], nums[i], latencies[i] = r.Due.ID, int64(r.Due.Attempts+1), o.Latency.Milliseconds()
		statuses[i] = sql.NullInt64{Int64: int64(o.StatusCode), Valid: o.StatusCode != 0}
		ats[i], states[i], errs[i], excerpts[i] = r.At.UTC().Format(time.RFC3339Nano), "pending", o.Err, o.Excerpt
		switch {
		case o.OK():
			states[i] = "delivered"
		case r.Next.IsZero():
			states[i] = "failed"
		default:
			nexts[i] = sql.NullString{String: r.Next.UTC().Format(time.RFC3339Nano), Valid: true}
		}
	}
	statusArr, nextArr := nullInts(statuses), nullStrings(nexts)
	return db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		const attempts = `
INSERT INTO delivery_attempts (delivery_id, n, at, status_code, latency_ms, error, response)
SELECT id, n, at, status, latency, nullif(err, ''), excerpt
FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[])
    AS a(id, n, at, status, latency, err, excerpt)
ON CONFLICT (delivery_id, n) DO NOTHING`
		if _, err := tx.ExecContext(ctx, attempts, ids, nums, ats, statusArr, latencies, errs, excerpts); err != nil {
			return fmt.Errorf("record %d attempts: %w", n, err)
		}
		const deliveries = `
UPDATE deliveries d SET state = r.state, attempts = r.n, first_attempt_at = coalesce(d.first_attempt_at, r.at),
    next_attempt_at = r.next, claimed_until = NULL, last_status_code = r.status, last_latency_ms = r.latency,
    last_error = nullif(r.err, ''), last_response = r.excerpt,
    delivered_at = CASE WHEN r.state = 'delivered' THEN r.at END
FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
    AS r(id, n, at, status, latency, err, excerpt, state, next)
WHERE d.id = r.id`
		if _, err := tx.ExecContext(ctx, deliveries, ids, nums, ats, statusArr, latencies, errs, excerpts, states, nextArr); err != nil {
			return fmt.Errorf("record %d deliveries: %w", n, err)
		}
		return s.healthAll(ctx, tx, rs, notify)
	})
}

// healthAll clears the failure record of the endpoints that took an event and records the
// failures of the others (healthy endpoints cost one statement for the whole batch).
func (s *Store) healthAll(ctx context.Context, tx *sqlx.Tx, rs []Result, notify Notify) error {
	var ok pq.Int64Array
	for _, r := range rs {
		if r.Outcome.OK() {
			ok = append(ok, r.Due.SubscriptionID)
		}
	}
	if len(ok) > 0 {
		const healthy = `UPDATE subscriptions SET failing_since = NULL WHERE id = ANY($1) AND failing_since IS NOT NULL`
		if _, err := tx.ExecContext(ctx, healthy, ok); err != nil {
			return fmt.Errorf("record endpoints healthy: %w", err)
		}
	}
	for _, r := range rs {
		if !r.Outcome.OK() {
			if err := s.health(ctx, tx, r, notify); err != nil {
				return err
			}
		}
	}
	return nil
}

func nullInts(v []sql.NullInt64) pq.GenericArray     { return pq.GenericArray{A: v} }
func nullStrings(v []sql.NullString) pq.GenericArray { return pq.GenericArray{A: v} }

// health records a failed attempt against its endpoint: failing since when, and past DisableAfter
// the endpoint is disabled and its owner told (in this transaction).
func (s *Store) health(ctx context.Context, tx *sqlx.Tx, r Result, notify Notify) error {
	sub := r.Due.SubscriptionID
	const failing = `
WITH old AS (SELECT id, enabled FROM subscriptions WHERE id = $1 FOR UPDATE)
UPDATE subscriptions s SET failing_since = coalesce(s.failing_since, $2),
    enabled = s.enabled AND coalesce(s.failing_since, $2) > $3,
    disabled_reason = CASE WHEN s.enabled AND coalesce(s.failing_since, $2) <= $3 THEN $4 ELSE s.disabled_reason END,
    updated_at = CASE WHEN s.enabled AND coalesce(s.failing_since, $2) <= $3 THEN $2 ELSE s.updated_at END
FROM old WHERE s.id = old.id
RETURNING old.enabled AND NOT s.enabled`
	reason := fmt.Sprintf("disabled: every delivery failed for %s", DisableAfter)
	var disabledNow bool
	err := tx.GetContext(ctx, &disabledNow, failing, sub, r.At, r.At.Add(-DisableAfter), reason)
	if db.IsNoRows(err) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return fmt.Errorf("record endpoint %d failing: %w", sub, err)
	}
	if !disabledNow {
		return nil
	}
	return notify(ctx, tx, sub)
}

// Release gives claimed deliveries back at once (the dispatcher is stopping).
func (s *Store) Release(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.conn.ExecContext(ctx, `UPDATE deliveries SET claimed_until = NULL WHERE id = ANY($1) AND state = 'pending'`, pq.Int64Array(ids)); err != nil {
		return fmt.Errorf("release deliveries: %w", err)
	}
	return nil
}

// Redeliver makes the delivery of event to subscription sub pending again at now, with a fresh
// retry window; NotFound when the endpoint never got that event.
func (s *Store) Redeliver(ctx context.Context, sub int64, eventID string, now time.Time) (int64, error) {
	const q = `
UPDATE deliveries SET state = 'pending', next_attempt_at = $3, first_attempt_at = NULL, claimed_until = NULL
WHERE subscription_id = $1 AND event_id = $2 RETURNING id`
	var id int64
	err := s.conn.GetContext(ctx, &id, q, sub, eventID, now)
	missing := apperr.NotFoundf("event %s was never sent to webhook %d", eventID, sub)
	if err = db.OneRow(err, missing, "redeliver %s to %d", eventID, sub); err != nil {
		return 0, err
	}
	return id, nil
}

// Attempt is one line of the delivery log.
type Attempt struct {
	DeliveryID int64     `db:"delivery_id"`
	N          int       `db:"n"`
	At         time.Time `db:"at"`
	StatusCode *int      `db:"status_code"`
	LatencyMS  int       `db:"latency_ms"`
	Error      *string   `db:"error"`
	Response   *string   `db:"response"`
}

// Delivery is a delivery as the log shows it.
type Delivery struct {
	ID            int64      `db:"id"`
	EventID       string     `db:"event_id"`
	EventType     string     `db:"type"`
	State         string     `db:"state"`
	Attempts      int        `db:"attempts"`
	NextAttemptAt *time.Time `db:"next_attempt_at"`
	LastStatus    *int       `db:"last_status_code"`
	LastLatencyMS *int       `db:"last_latency_ms"`
	LastError     *string    `db:"last_error"`
	LastResponse  *string    `db:"last_response"`
	CreatedAt     time.Time  `db:"created_at"`
	DeliveredAt   *time.Time `db:"delivered_at"`
	Log           []Attempt  `db:"-"`
}

// Log is a page of subscription sub's deliveries, newest first, each with its attempts, and the
// total; state, when set, keeps those in it.
func (s *Store) Log(ctx context.Context, sub int64, state string, offset, limit int) ([]Delivery, int, error) {
	var total int
	if err := s.conn.GetContext(ctx, &total, `SELECT count(*) FROM deliveries WHERE subscription_id = $1 AND ($2 = '' OR state = $2)`, sub, state); err != nil {
		return nil, 0, fmt.Errorf("count deliveries of %d: %w", sub, err)
	}
	out := []Delivery{}
	const q = `
SELECT d.id, d.event_id, e.type, d.state, d.attempts, d.next_attempt_at, d.last_status_code, d.last_latency_ms,
    d.last_error, d.last_response, d.created_at, d.delivered_at
FROM deliveries d JOIN events e ON e.id = d.event_id
WHERE d.subscription_id = $1 AND ($2 = '' OR d.state = $2) ORDER BY d.id DESC OFFSET $3 LIMIT $4`
	if err := s.conn.SelectContext(ctx, &out, q, sub, state, offset, limit); err != nil {
		return nil, 0, fmt.Errorf("list deliveries of %d: %w", sub, err)
	}
	if len(out) == 0 {
		return out, total, nil
	}
	ids := make(pq.Int64Array, len(out))
	at := make(map[int64]int, len(out))
	for i, d := range out {
		ids[i], at[d.ID] = d.ID, i
		out[i].Log = []Attempt{}
	}
	var attempts []Attempt
	if err := s.conn.SelectContext(ctx, &attempts, `SELECT delivery_id, n, at, status_code, latency_ms, error, response
FROM delivery_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, n`, ids); err != nil {
		return nil, 0, fmt.Errorf("attempts of deliveries of %d: %w", sub, err)
	}
	for _, a := range attempts {
		out[at[a.DeliveryID]].Log = append(out[at[a.DeliveryID]].Log, a)
	}
	return out, total, nil
}

// purgeBatch bounds the rows one purge statement deletes, so a long backlog of old rows is removed
// in short transactions.
const purgeBatch = 5000

// Purge deletes the deliveries that are no longer pending and were created before before (their
// attempts go with them), then the events no delivery refers to any more, and returns how many
// deliveries it deleted. A pending delivery is never purged, whatever its age.
func (s *Store) Purge(ctx context.Context, before time.Time) (int64, error) {
	const (
		deliveries = `
DELETE FROM deliveries WHERE id IN (
    SELECT id FROM deliveries WHERE state <> 'pending' AND created_at < $1 LIMIT $2)`
		events = `
DELETE FROM events WHERE id IN (
    SELECT e.id FROM events e WHERE e.received_at < $1
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id) LIMIT $2)`
	)
	var total int64
	for _, q := range []string{deliveries, events} {
		for {
			res, err := s.conn.ExecContext(ctx, q, before, purgeBatch)
			if err != nil {
				return total, fmt.Errorf("purge the delivery log: %w", err)
			}
			n, _ := res.RowsAffected()
			if q == deliveries {
				total += n
			}
			if n < purgeBatch {
				break
			}
		}
	}
	return total, nil
}
