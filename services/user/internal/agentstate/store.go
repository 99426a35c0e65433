package agentstate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/db"
	"ccplatform/pkg/event"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store keeps the history and the current states.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on conn.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

type eventRow struct {
	EventID     string    `json:"event_id"`
	UserID      int64     `json:"user_id"`
	State       string    `json:"state"`
	PauseReason *string   `json:"pause_reason"`
	OrderID     *int64    `json:"order_id"`
	At          time.Time `json:"at"`
	Source      string    `json:"source"`
}

// Apply records events in one transaction: each into the history once (an id seen before is
// skipped), the newest of each agent as its current state unless the agent's state is newer
// already (the later event id wins a tie, so that every replica and every order of arrival agree),
// and an agent.state.changed event (docs/events.md) for each new one in the outbox, published once
// the transaction committed.
func (s *Store) Apply(ctx context.Context, events []Event) error {
	const (
		insert = `
INSERT INTO agent_state_events (event_id, user_id, state, pause_reason, order_id, at, source)
SELECT event_id, user_id, state, pause_reason, order_id, at, source
FROM jsonb_to_recordset($1::jsonb) AS x(event_id text, user_id bigint, state text, pause_reason text,
	order_id bigint, at timestamptz, source text)
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id`
		current = `
INSERT INTO agent_states (user_id, state, pause_reason, order_id, since, event_id)
SELECT DISTINCT ON (user_id) user_id, state, pause_reason, order_id, at, event_id
FROM agent_state_events WHERE event_id = ANY($1) ORDER BY user_id, at DESC, event_id DESC
ON CONFLICT (user_id) DO UPDATE SET state = EXCLUDED.state, pause_reason = EXCLUDED.pause_reason,
	order_id = EXCLUDED.order_id, since = EXCLUDED.since, event_id = EXCLUDED.event_id
WHERE (agent_states.since, agent_states.event_id) < (EXCLUDED.since, EXCLUDED.event_id)`
		// Each new event with the state it follows in the agent's history (a late event's is the
		// older one it comes after, not the current state it did not replace).
		changed = `
SELECT e.event_id, e.user_id, e.state, e.pause_reason, e.order_id, e.at, p.state AS previous_state, p.at AS previous_at
FROM agent_state_events e
LEFT JOIN LATERAL (SELECT q.state, q.at FROM agent_state_events q
	WHERE q.user_id = e.user_id AND (q.at, q.event_id) < (e.at, e.event_id)
	ORDER BY q.at DESC, q.event_id DESC LIMIT 1) p ON true
WHERE e.event_id = ANY($1) ORDER BY e.at, e.event_id`
	)
	rows := make([]eventRow, len(events))
	for i, e := range events {
		rows[i] = eventRow{EventID: e.EventID, UserID: e.UserID, State: e.State, PauseReason: e.PauseReason,
			OrderID: e.OrderID, At: e.At.UTC(), Source: e.Source}
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("encode agent events: %w", err)
	}
	return db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		var ids []string
		if err := tx.SelectContext(ctx, &ids, insert, string(body)); err != nil {
			return fmt.Errorf("record %d agent events: %w", len(events), err)
		}
		if len(ids) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, current, pq.StringArray(ids)); err != nil {
			return fmt.Errorf("set agents' current states: %w", err)
		}
		var news []changedRow
		if err := tx.SelectContext(ctx, &news, changed, pq.StringArray(ids)); err != nil {
			return fmt.Errorf("read the new agent events: %w", err)
		}
		evs := make([]event.Event, len(news))
		for i, n := range news {
			if evs[i], err = n.event(); err != nil {
				return err
			}
		}
		return event.RecordAll(ctx, tx, evs)
	})
}

// EventStateChanged is the event of every agent state recorded.
const EventStateChanged = "agent.state.changed"

// changedRow is a new history row with the state it follows.
type changedRow struct {
	EventID       string     `db:"event_id"`
	UserID        int64      `db:"user_id"`
	State         string     `db:"state"`
	PauseReason   *string    `db:"pause_reason"`
	OrderID       *int64     `db:"order_id"`
	At            time.Time  `db:"at"`
	PreviousState *string    `db:"previous_state"`
	PreviousAt    *time.Time `db:"previous_at"`
}

// event is r's agent.state.changed: its id is the history event's (redelivered, the same), its
// time the state's.
func (r changedRow) event() (event.Event, error) {
	data := map[string]any{"userId": r.UserID, "state": r.State, "pauseReason": r.PauseReason, "orderId": r.OrderID,
		"at": apitime.String(r.At), "previousState": r.PreviousState, "previousAt": apitime.StringOrNull(r.PreviousAt)}
	ev, err := event.New(EventStateChanged, 0, data)
	if err != nil {
		return event.Event{}, err
	}
	ev.ID = uuid.NewSHA1(uuid.NameSpaceURL, []byte("agent-state:"+r.EventID)).String()
	ev.OccurredAt = apitime.String(r.At)
	if r.OrderID != nil {
		ev.OrderID = *r.OrderID
	}
	return ev, nil
}

// Known is which of ids are users.
func (s *Store) Known(ctx context.Context, ids []int64) (map[int64]bool, error) {
	var found []int64
	if err := s.conn.SelectContext(ctx, &found, `SELECT id FROM users WHERE id = ANY($1)`, pq.Int64Array(ids)); err != nil {
		return nil, fmt.Errorf("look users up: %w", err)
	}
	out := make(map[int64]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// Agent is an agent with its current state.
type Agent struct {
	UserID      int64      `db:"user_id"`
	AccessGroup string     `db:"access_group"`
	PhoneMode   string     `db:"phone_mode"`
	State       string     `db:"state"`
	PauseReason *string    `db:"pause_reason"`
	OrderID     *int64     `db:"order_id"`
	Since       *time.Time `db:"since"`
}

// agentColumns reads an agent: a user never seen by the platform is offline since never.
const agentColumns = `u.id AS user_id, u.access_group, u.phone_mode, coalesce(s.state, 'offline') AS state,
	s.pause_reason, s.order_id, s.since`

// Filter narrows the agent list.
type Filter struct {
	UserIDs []int64
	State   string
	// MembersOf, when set, keeps the agents in those agent groups and Self (a senior's view).
	MembersOf []int64
	Self      int64
	// OnlySelf keeps Self alone (an agent's view).
	OnlySelf      bool
	Offset, Limit int
}

func (f Filter) where() (string, []any) {
	w := `u.is_active AND u.access_group IN ('call-center', 'call-center-senior')
	AND (coalesce(cardinality($1::bigint[]), 0) = 0 OR u.id = ANY($1))
	AND ($2 = '' OR coalesce(s.state, 'offline') = $2)`
	args := []any{pq.Int64Array(f.UserIDs), f.State}
	switch {
	case f.OnlySelf:
		w += ` AND u.id = $3`
		args = append(args, f.Self)
	case f.MembersOf != nil:
		w += ` AND (u.id = $3 OR u.id IN (SELECT user_id FROM agent_group_members WHERE group_id = ANY($4)))`
		args = append(args, f.Self, pq.Int64Array(f.MembersOf))
	}
	return w, args
}

// List is a page of the agents f keeps, by id, and how many it keeps in all.
func (s *Store) List(ctx context.Context, f Filter) ([]Agent, int, error) {
	where, args := f.where()
	from := ` FROM users u LEFT JOIN agent_states s ON s.user_id = u.id WHERE ` + where
	var out []Agent
	n := len(args)
	q := `SELECT ` + agentColumns + from + fmt.Sprintf(` ORDER BY u.id OFFSET $%d LIMIT $%d`, n+1, n+2)
	if err := s.conn.SelectContext(ctx, &out, q, append(args, f.Offset, f.Limit)...); err != nil {
		return nil, 0, fmt.Errorf("list agents: %w", err)
	}
	var total int
	if err := s.conn.GetContext(ctx, &total, `SELECT count(*)`+from, args...); err != nil {
		return nil, 0, fmt.Errorf("count agents: %w", err)
	}
	return out, total, nil
}

// Eligible is the active users among ids and the members of groups, with their current states, in
// one round trip: the agents an order may use.
func (s *Store) Eligible(ctx context.Context, ids, groups []int64) ([]Agent, error) {
	q := `SELECT ` + agentColumns + ` FROM users u LEFT JOIN agent_states s ON s.user_id = u.id
WHERE u.is_active AND (u.id = ANY($1) OR u.id IN (SELECT user_id FROM agent_group_members WHERE group_id = ANY($2)))
ORDER BY u.id`
	var out []Agent
	if err := s.conn.SelectContext(ctx, &out, q, pq.Int64Array(ids), pq.Int64Array(groups)); err != nil {
		return nil, fmt.Errorf("eligible agents: %w", err)
	}
	return out, nil
}

// GroupsOf is the agent groups userID is in.
func (s *Store) GroupsOf(ctx context.Context, userID int64) ([]int64, error) {
	out := []int64{}
	if err := s.conn.SelectContext(ctx, &out, `SELECT group_id FROM agent_group_members WHERE user_id = $1`, userID); err != nil {
		return nil, fmt.Errorf("groups of user %d: %w", userID, err)
	}
	return out, nil
}

// ByState counts the active agents in each state (for /metrics).
func (s *Store) ByState(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		State string `db:"state"`
		N     int    `db:"n"`
	}
	const q = `SELECT coalesce(s.state, 'offline') AS state, count(*) AS n FROM users u
LEFT JOIN agent_states s ON s.user_id = u.id
WHERE u.is_active AND u.access_group IN ('call-center', 'call-center-senior') GROUP BY 1`
	if err := s.conn.SelectContext(ctx, &rows, q); err != nil {
		return nil, fmt.Errorf("count agents by state: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.State] = r.N
	}
	return out, nil
}
