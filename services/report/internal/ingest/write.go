package ingest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Write adds facts to the aggregates inside tx, each event once: the ids are recorded in
// handled_events in the same transaction, and only the facts whose id was new are counted, so a
// copy delivered again (or handled by another process at the same moment) adds nothing. Rows are
// written in key order, so that two batches touching the same buckets cannot deadlock.
func Write(ctx context.Context, tx *sqlx.Tx, facts []Fact) error {
	ids := make([]string, 0, len(facts))
	for _, f := range facts {
		ids = append(ids, f.EventID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var fresh []string
	if err := tx.SelectContext(ctx, &fresh, `INSERT INTO handled_events (event_id) SELECT unnest($1::text[])
		ON CONFLICT (event_id) DO NOTHING RETURNING event_id`, pq.Array(ids)); err != nil {
		return fmt.Errorf("record handled events: %w", err)
	}
	isFresh := make(map[string]bool, len(fresh))
	for _, id := range fresh {
		isFresh[id] = true
	}
	a := newAggregates()
	var agents []Fact
	for _, f := range facts {
		if isFresh[f.EventID] {
			delete(isFresh, f.EventID) // the same event twice in one batch counts once
			if f.Agent != nil {
				agents = append(agents, f)
				continue
			}
			a.add(f)
		}
	}
	if err := a.write(ctx, tx); err != nil {
		return err
	}
	return writeAgentStates(ctx, tx, agents)
}

type orderKey struct {
	order  int64
	bucket time.Time
}

// orderSums are the figures added to one key.
type orderSums struct{ calls, answered, handled, abandoned, talk int64 }

type agentCallKey struct {
	user   int64
	bucket time.Time
	order  int64
}

type leadKey struct {
	order  int64
	bucket time.Time
	lead   int64
}

type statusKey struct {
	order  int64
	bucket time.Time
	status int64
}

// aggregates are a batch's additions to the 15-minute buckets, one row per key (a statement may
// not touch a row twice). The statements that add them add the same sums to the UTC hours of the
// roll-up. The leads called have no hourly rows: they are one row per call, and a second such row
// per call cost ingest more than the reports gained (docs/performance.md, "Reports").
type aggregates struct {
	orders   map[orderKey]*orderSums
	agents   map[agentCallKey]*orderSums
	leads    map[leadKey]bool
	statuses map[statusKey]int64
}

func newAggregates() *aggregates {
	return &aggregates{orders: map[orderKey]*orderSums{}, agents: map[agentCallKey]*orderSums{},
		leads: map[leadKey]bool{}, statuses: map[statusKey]int64{}}
}

// addCall adds call c to the sums of key k in m.
func addCall[K comparable](m map[K]*orderSums, k K, c *Call) {
	s := m[k]
	if s == nil {
		s = &orderSums{}
		m[k] = s
	}
	s.calls++
	s.talk += c.TalkSeconds
	if c.Answered() {
		s.answered++
	}
	if c.Handled() {
		s.handled++
	}
	if c.Abandoned() {
		s.abandoned++
	}
}

func (a *aggregates) add(f Fact) {
	b := f.Bucket()
	switch {
	case f.Call != nil:
		c := f.Call
		addCall(a.orders, orderKey{c.OrderID, b}, c)
		a.leads[leadKey{c.OrderID, b, c.LeadID}] = true
		ak := agentCallKey{c.UserID, b, c.OrderID}
		as := a.agents[ak]
		if as == nil {
			as = &orderSums{}
			a.agents[ak] = as
		}
		as.calls++
		as.talk += c.TalkSeconds
		if c.Handled() {
			as.handled++
		}
	case f.Status != nil:
		a.statuses[statusKey{f.Status.OrderID, b, f.Status.StatusID}]++
	}
}

func byOrderBucket(ao, bo int64, ab, bb time.Time) int {
	if c := cmp.Compare(ao, bo); c != 0 {
		return c
	}
	return ab.Compare(bb)
}

func (a *aggregates) write(ctx context.Context, tx *sqlx.Tx) error {
	if err := writeOrderSums(ctx, tx, a.orders); err != nil {
		return err
	}
	if len(a.agents) > 0 {
		keys := sortedKeys(a.agents, func(x, y agentCallKey) int {
			if c := byOrderBucket(x.user, y.user, x.bucket, y.bucket); c != 0 {
				return c
			}
			return cmp.Compare(x.order, y.order)
		})
		var users, orders, calls, handled, talk []int64
		var buckets []time.Time
		for _, k := range keys {
			s := a.agents[k]
			users, buckets, orders = append(users, k.user), append(buckets, k.bucket), append(orders, k.order)
			calls, handled, talk = append(calls, s.calls), append(handled, s.handled), append(talk, s.talk)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_call_buckets AS a (user_id, bucket, order_id, calls, handled, talk_seconds)
			SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
			ON CONFLICT (user_id, bucket, order_id) DO UPDATE SET calls = a.calls + EXCLUDED.calls,
				handled = a.handled + EXCLUDED.handled, talk_seconds = a.talk_seconds + EXCLUDED.talk_seconds`,
			pq.Array(users), pq.Array(buckets), pq.Array(orders), pq.Array(calls), pq.Array(handled), pq.Array(talk)); err != nil {
			return fmt.Errorf("add calls to agent buckets: %w", err)
		}
	}
	if err := writeLeads(ctx, tx, a.leads); err != nil {
		return err
	}
	return writeStatuses(ctx, tx, a.statuses)
}

// writeOrderSums adds sums to their 15-minute buckets, and to the UTC hours of the roll-up in the
// same statement (one round trip; the hours summed in SQL from the same rows, in key order as the
// buckets are, so two workers take the rows' locks in one order).
func writeOrderSums(ctx context.Context, tx *sqlx.Tx, sums map[orderKey]*orderSums) error {
	if len(sums) == 0 {
		return nil
	}
	keys := sortedKeys(sums, func(x, y orderKey) int { return byOrderBucket(x.order, y.order, x.bucket, y.bucket) })
	var orders, calls, answered, handled, abandoned, talk []int64
	var times []time.Time
	for _, k := range keys {
		s := sums[k]
		orders, times = append(orders, k.order), append(times, k.bucket)
		calls, answered, handled = append(calls, s.calls), append(answered, s.answered), append(handled, s.handled)
		abandoned, talk = append(abandoned, s.abandoned), append(talk, s.talk)
	}
	if _, err := tx.ExecContext(ctx, `WITH i AS (
			SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
				AS i (order_id, bucket, calls, answered, handled, abandoned, talk_seconds)),
		b AS (INSERT INTO order_buckets AS o (order_id, bucket, calls, answered, handled, abandoned, talk_seconds)
			SELECT * FROM i
			ON CONFLICT (order_id, bucket) DO UPDATE SET calls = o.calls + EXCLUDED.calls, answered = o.answered + EXCLUDED.answered,
				handled = o.handled + EXCLUDED.handled, abandoned = o.abandoned + EXCLUDED.abandoned,
				talk_seconds = o.talk_seconds + EXCLUDED.talk_seconds)
		INSERT INTO order_hours AS o (order_id, hour, calls, answered, handled, abandoned, talk_seconds)
		SELECT order_id, date_trunc('hour', bucket, 'UTC'), sum(calls), sum(answered), sum(handled), sum(abandoned), sum(talk_seconds)
		FROM i GROUP BY 1, 2 ORDER BY 1, 2
		ON CONFLICT (order_id, hour) DO UPDATE SET calls = o.calls + EXCLUDED.calls, answered = o.answered + EXCLUDED.answered,
			handled = o.handled + EXCLUDED.handled, abandoned = o.abandoned + EXCLUDED.abandoned,
			talk_seconds = o.talk_seconds + EXCLUDED.talk_seconds`,
		pq.Array(orders), pq.Array(times), pq.Array(calls), pq.Array(answered), pq.Array(handled), pq.Array(abandoned), pq.Array(talk)); err != nil {
		return fmt.Errorf("add calls to the order buckets and hours: %w", err)
	}
	return nil
}

// writeLeads records the leads called in their 15-minute buckets.
func writeLeads(ctx context.Context, tx *sqlx.Tx, leads map[leadKey]bool) error {
	if len(leads) == 0 {
		return nil
	}
	keys := sortedKeys(leads, func(x, y leadKey) int {
		if c := byOrderBucket(x.order, y.order, x.bucket, y.bucket); c != 0 {
			return c
		}
		return cmp.Compare(x.lead, y.lead)
	})
	var orders, ids []int64
	var times []time.Time
	for _, k := range keys {
		orders, times, ids = append(orders, k.order), append(times, k.bucket), append(ids, k.lead)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO lead_call_buckets (order_id, bucket, lead_id)
		SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[]) ON CONFLICT DO NOTHING`,
		pq.Array(orders), pq.Array(times), pq.Array(ids)); err != nil {
		return fmt.Errorf("add leads called: %w", err)
	}
	return nil
}

// writeStatuses adds status entries to their 15-minute buckets, and to the UTC hours in the same
// statement, as writeOrderSums does.
func writeStatuses(ctx context.Context, tx *sqlx.Tx, entered map[statusKey]int64) error {
	if len(entered) == 0 {
		return nil
	}
	keys := sortedKeys(entered, func(x, y statusKey) int {
		if c := byOrderBucket(x.order, y.order, x.bucket, y.bucket); c != 0 {
			return c
		}
		return cmp.Compare(x.status, y.status)
	})
	var orders, statuses, counts []int64
	var times []time.Time
	for _, k := range keys {
		orders, times, statuses, counts = append(orders, k.order), append(times, k.bucket), append(statuses, k.status), append(counts, entered[k])
	}
	if _, err := tx.ExecContext(ctx, `WITH i AS (
			SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[]) AS i (order_id, bucket, status_id, entered)),
		b AS (INSERT INTO status_buckets AS s (order_id, bucket, status_id, entered)
			SELECT * FROM i
			ON CONFLICT (order_id, bucket, status_id) DO UPDATE SET entered = s.entered + EXCLUDED.entered)
		INSERT INTO status_hours AS s (order_id, hour, status_id, entered)
		SELECT order_id, date_trunc('hour', bucket, 'UTC'), status_id, sum(entered) FROM i GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
		ON CONFLICT (order_id, hour, status_id) DO UPDATE SET entered = s.entered + EXCLUDED.entered`,
		pq.Array(orders), pq.Array(times), pq.Array(statuses), pq.Array(counts)); err != nil {
		return fmt.Errorf("add status entries to the buckets and hours: %w", err)
	}
	return nil
}

func sortedKeys[K comparable, V any](m map[K]V, order func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, order)
	return keys
}
