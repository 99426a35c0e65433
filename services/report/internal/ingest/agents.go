package ingest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/services/report/internal/bucket"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// AgentStateChanged is the user service's announcement of an agent state it stored.
const AgentStateChanged = "agent.state.changed"

// The agent states (pkg/telephony's AgentEvent vocabulary).
var agentStates = []string{"offline", "available", "ringing", "on-call", "wrap-up", "paused"}

// Offline is the state whose time no report counts.
const Offline = "offline"

// AgentState is an agent entering a state at At (agent.state.changed's data).
type AgentState struct {
	UserID      int64
	State       string
	PauseReason string
	OrderID     int64
	At          time.Time
}

type agentData struct {
	UserID      int64   `json:"userId"`
	State       string  `json:"state"`
	PauseReason *string `json:"pauseReason"`
	OrderID     *int64  `json:"orderId"`
	At          string  `json:"at"`
}

// agentStateOf reads agent.state.changed's data.
func agentStateOf(raw json.RawMessage, fe apperr.FieldErrors) (*AgentState, error) {
	var d agentData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("invalid event: data: %w", err)
	}
	s := &AgentState{UserID: d.UserID, State: d.State, At: eventTime(d.At, "data.at", fe)}
	if d.UserID <= 0 {
		fe.Add("data.userId", "must be an integer > 0")
	}
	if !slices.Contains(agentStates, d.State) {
		fe.Add("data.state", "must be offline, available, ringing, on-call, wrap-up or paused")
	}
	if d.PauseReason != nil {
		s.PauseReason = *d.PauseReason
	}
	if d.OrderID != nil && *d.OrderID > 0 {
		s.OrderID = *d.OrderID
	}
	return s, nil
}

// segment is a time an agent spent in one state.
type segment struct {
	user     int64
	state    string
	reason   string
	order    int64
	from, to time.Time
	sign     int64 // +1 to add, -1 to take back (a late event split it)
}

type stateKey struct {
	user   int64
	bucket time.Time
	state  string
	reason string
	order  int64
}

// split adds s's milliseconds to each bucket it covers.
func (s segment) split(into map[stateKey]int64) {
	if s.state == Offline || !s.to.After(s.from) {
		return
	}
	for b := bucket.Of(s.from); b.Before(s.to); b = b.Add(bucket.Size) {
		from, to := b, b.Add(bucket.Size)
		if s.from.After(from) {
			from = s.from
		}
		if s.to.Before(to) {
			to = s.to
		}
		if from.Before(to) {
			into[stateKey{s.user, b, s.state, s.reason, s.order}] += s.sign * to.Sub(from).Milliseconds()
		}
	}
}

type historyRow struct {
	At          time.Time `db:"at"`
	EventID     string    `db:"event_id"`
	State       string    `db:"state"`
	PauseReason string    `db:"pause_reason"`
	OrderID     int64     `db:"order_id"`
}

// writeAgentStates adds states (new events only) to the history and the buckets: each state takes
// its place in its agent's history, the segment it falls into is split in two, and the segment
// before it now ends at it. An agent's history is changed under a lock of the agent's, taken in
// agent order, so two batches about one agent follow each other.
func writeAgentStates(ctx context.Context, tx *sqlx.Tx, facts []Fact) error {
	slices.SortFunc(facts, func(a, b Fact) int {
		if c := cmp.Compare(a.Agent.UserID, b.Agent.UserID); c != 0 {
			return c
		}
		return a.Agent.At.Compare(b.Agent.At)
	})
	sums := map[stateKey]int64{}
	locked := map[int64]bool{}
	for _, f := range facts {
		s := f.Agent
		if !locked[s.UserID] {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('report agent ' || $1::text, 0))`, s.UserID); err != nil {
				return fmt.Errorf("lock agent %d: %w", s.UserID, err)
			}
			locked[s.UserID] = true
		}
		var pred, succ []historyRow
		if err := tx.SelectContext(ctx, &pred, `SELECT at, event_id, state, pause_reason, order_id FROM agent_states
			WHERE user_id = $1 AND (at, event_id) < ($2, $3) ORDER BY at DESC, event_id DESC LIMIT 1`, s.UserID, s.At, f.EventID); err != nil {
			return fmt.Errorf("agent %d's previous state: %w", s.UserID, err)
		}
		if err := tx.SelectContext(ctx, &succ, `SELECT at, event_id, state, pause_reason, order_id FROM agent_states
			WHERE user_id = $1 AND (at, event_id) > ($2, $3) ORDER BY at, event_id LIMIT 1`, s.UserID, s.At, f.EventID); err != nil {
			return fmt.Errorf("agent %d's next state: %w", s.UserID, err)
		}
		if len(pred) == 1 {
			p := pred[0]
			if len(succ) == 1 {
				segment{s.UserID, p.State, p.PauseReason, p.OrderID, p.At, succ[0].At, -1}.split(sums)
			}
			segment{s.UserID, p.State, p.PauseReason, p.OrderID, p.At, s.At, 1}.split(sums)
		}
		if len(succ) == 1 {
			segment{s.UserID, s.State, s.PauseReason, s.OrderID, s.At, succ[0].At, 1}.split(sums)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_states (user_id, at, event_id, state, pause_reason, order_id)
			VALUES ($1, $2, $3, $4, $5, $6)`, s.UserID, s.At, f.EventID, s.State, s.PauseReason, s.OrderID); err != nil {
			return fmt.Errorf("record agent %d's state: %w", s.UserID, err)
		}
	}
	if len(sums) == 0 {
		return nil
	}
	keys := sortedKeys(sums, func(x, y stateKey) int {
		if c := byOrderBucket(x.user, y.user, x.bucket, y.bucket); c != 0 {
			return c
		}
		if c := cmp.Compare(x.state, y.state); c != 0 {
			return c
		}
		if c := cmp.Compare(x.reason, y.reason); c != 0 {
			return c
		}
		return cmp.Compare(x.order, y.order)
	})
	var users, orders, ms []int64
	var buckets []time.Time
	var states, reasons []string
	for _, k := range keys {
		users, buckets, states, reasons, orders, ms = append(users, k.user), append(buckets, k.bucket), append(states, k.state),
			append(reasons, k.reason), append(orders, k.order), append(ms, sums[k])
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO agent_state_buckets AS a (user_id, bucket, state, pause_reason, order_id, ms)
		SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
		ON CONFLICT (user_id, bucket, state, pause_reason, order_id) DO UPDATE SET ms = a.ms + EXCLUDED.ms`,
		pq.Array(users), pq.Array(buckets), pq.Array(states), pq.Array(reasons), pq.Array(orders), pq.Array(ms)); err != nil {
		return fmt.Errorf("add agent state time: %w", err)
	}
	return nil
}
