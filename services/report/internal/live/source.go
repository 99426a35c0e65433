package live

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"

	"github.com/jmoiron/sqlx"
)

// Source takes snapshots: the orders being worked from the report's own agent states, their
// agents and dialing from the lead service's dialer.
type Source struct {
	conn  *sqlx.DB
	leads *svcclient.Client
	now   func() time.Time
}

// NewSource reads conn's schema and asks leads (the lead service); now is the clock.
func NewSource(conn *sqlx.DB, leads *svcclient.Client, now func() time.Time) *Source {
	return &Source{conn: conn, leads: leads, now: now}
}

// workedOrders are the orders being worked: for each agent whose latest state is not offline,
// the order its latest state naming one named (the order of its call, or of its last call). The
// distinct agents are read by a loose index scan of agent_states' key, and each one's latest
// rows by that key too, so the cost follows the agents, not the length of the history.
const workedOrders = `
WITH RECURSIVE users AS (
    (SELECT user_id FROM agent_states ORDER BY user_id LIMIT 1)
    UNION ALL
    SELECT (SELECT s.user_id FROM agent_states s WHERE s.user_id > u.user_id ORDER BY s.user_id LIMIT 1)
    FROM users u WHERE u.user_id IS NOT NULL
)
SELECT DISTINCT o.order_id FROM users u
CROSS JOIN LATERAL (SELECT state FROM agent_states s WHERE s.user_id = u.user_id
    ORDER BY at DESC, event_id DESC LIMIT 1) c
CROSS JOIN LATERAL (SELECT order_id FROM agent_states s WHERE s.user_id = u.user_id AND s.order_id <> 0
    ORDER BY at DESC, event_id DESC LIMIT 1) o
WHERE u.user_id IS NOT NULL AND c.state <> 'offline'
ORDER BY 1`

// Orders are the ids of the orders being worked now.
func (s *Source) Orders(ctx context.Context) ([]int64, error) {
	ids := []int64{}
	if err := s.conn.SelectContext(ctx, &ids, workedOrders); err != nil {
		return nil, fmt.Errorf("read the orders being worked: %w", err)
	}
	return ids, nil
}

// maxAsked is how many orders one question to the lead service names (its limit).
const maxAsked = 1000

// dialed is one order of the lead service's answer (POST /internal/dialer/live).
type dialed struct {
	OrderID int64   `json:"orderId"`
	Agents  []Agent `json:"agents"`
	Dialing
}

// Take is a snapshot now: the orders being worked with their agents and dialing.
func (s *Source) Take(ctx context.Context) (*Snapshot, error) {
	at := s.now()
	ids, err := s.Orders(ctx)
	if err != nil {
		return nil, err
	}
	list := []Order{}
	for part := range slices.Chunk(ids, maxAsked) {
		var out struct {
			List []dialed `json:"list"`
		}
		if err := s.leads.Do(ctx, http.MethodPost, "/internal/dialer/live", map[string]any{"orderIds": part}, &out); err != nil {
			return nil, apperr.Wrap(apperr.KindOf(err), err, "read the dialing of the orders being worked")
		}
		for _, d := range out.List {
			dialing := d.Dialing
			list = append(list, Order{OrderID: d.OrderID, Agents: d.Agents, Dialing: &dialing})
		}
	}
	return NewSnapshot(at, list), nil
}
