package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store writes ingested calls.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Statuses maps each call-status code to its id. It is read for every batch: the catalog is small
// and may be edited while the consumer runs.
func (s *Store) Statuses(ctx context.Context) (map[string]int64, error) {
	const q = `SELECT code, id FROM call_statuses`
	var rows []struct {
		Code string `db:"code"`
		ID   int64  `db:"id"`
	}
	if err := s.conn.SelectContext(ctx, &rows, q); err != nil {
		return nil, fmt.Errorf("read call statuses: %w", err)
	}
	m := make(map[string]int64, len(rows))
	for _, r := range rows {
		m[r.Code] = r.ID
	}
	return m, nil
}

// Resolved is a valid call with its status id.
type Resolved struct {
	NewCall
	StatusID int64
}

// row is one call as jsonb_to_recordset reads it.
type row struct {
	PlatformCallID  string     `json:"platform_call_id"`
	LeadID          int64      `json:"lead_id"`
	OrderID         int64      `json:"order_id"`
	UserID          int64      `json:"user_id"`
	SipEndpointID   int64      `json:"sip_endpoint_id"`
	StatusID        int64      `json:"status_id"`
	Direction       string     `json:"direction"`
	FinishInitiator *string    `json:"finish_initiator"`
	ClientPhone     string     `json:"client_phone"`
	IsPredictive    bool       `json:"is_predictive"`
	HasRecords      bool       `json:"has_records"`
	StartedAt       time.Time  `json:"started_at"`
	AnsweredAt      *time.Time `json:"answered_at"`
	AgentConnected  *time.Time `json:"agent_connected_at"`
	EndedAt         time.Time  `json:"ended_at"`
	TotalSeconds    int        `json:"total_duration_seconds"`
	WaitSeconds     int        `json:"wait_time_duration_seconds"`
	TalkSeconds     int        `json:"talk_time_duration_seconds"`
	SourceEventID   string     `json:"source_event_id"`
}

// Save stores the batch in one transaction, one multi-row INSERT, each call once by its platform
// call id (a call stored before, or twice in the batch, is skipped). It returns every call of the
// batch whose call.finished is still unconfirmed: the new ones, and those stored by an earlier
// delivery whose event never got its confirm.
func (s *Store) Save(ctx context.Context, calls []Resolved) ([]Pending, error) {
	const (
		insert = `
INSERT INTO calls (platform_call_id, lead_id, order_id, user_id, sip_endpoint_id, status_id, direction,
	finish_initiator, client_phone, is_predictive, has_records, started_at, answered_at, ended_at,
	total_duration_seconds, wait_time_duration_seconds, talk_time_duration_seconds, created_at, source_event_id,
	agent_connected_at)
SELECT platform_call_id, lead_id, order_id, user_id, sip_endpoint_id, status_id, direction,
	finish_initiator, client_phone, is_predictive, has_records, started_at, answered_at, ended_at,
	total_duration_seconds, wait_time_duration_seconds, talk_time_duration_seconds, started_at, source_event_id,
	agent_connected_at
FROM jsonb_to_recordset($1::jsonb) AS x(platform_call_id text, lead_id bigint, order_id bigint, user_id bigint,
	sip_endpoint_id bigint, status_id integer, direction text, finish_initiator text, client_phone text,
	is_predictive boolean, has_records boolean, started_at timestamptz, answered_at timestamptz,
	ended_at timestamptz, total_duration_seconds integer, wait_time_duration_seconds integer,
	talk_time_duration_seconds integer, source_event_id text, agent_connected_at timestamptz)
ON CONFLICT (platform_call_id) DO NOTHING`
		unpublished = `
SELECT c.id, c.sip_endpoint_id, c.finish_initiator, c.direction, c.lead_id, c.user_id, c.order_id, c.status_id,
	c.total_duration_seconds, c.wait_time_duration_seconds, c.talk_time_duration_seconds, c.is_predictive,
	c.client_phone, c.has_records, c.created_at, c.platform_call_id, s.code AS status_code, c.ended_at, c.finished_event_id,
	c.answered_at, c.agent_connected_at
FROM calls c JOIN call_statuses s ON s.id = c.status_id
WHERE c.platform_call_id = ANY($1) AND c.finished_published_at IS NULL
ORDER BY c.id`
	)
	rows := make([]row, len(calls))
	keys := make([]string, len(calls))
	for i, c := range calls {
		rows[i] = row{
			PlatformCallID: c.PlatformCallID, LeadID: c.LeadID, OrderID: c.OrderID, UserID: c.UserID,
			SipEndpointID: c.SipEndpointID, StatusID: c.StatusID, Direction: c.Direction,
			FinishInitiator: c.FinishInitiator, ClientPhone: c.ClientPhone, IsPredictive: c.IsPredictive,
			HasRecords: c.HasRecords, StartedAt: c.StartedAt, AnsweredAt: c.AnsweredAt, AgentConnected: c.AgentConnectedAt,
			EndedAt:      c.EndedAt,
			TotalSeconds: c.TotalSeconds, WaitSeconds: c.WaitSeconds, TalkSeconds: c.TalkSeconds,
			SourceEventID: c.EventID,
		}
		keys[i] = c.PlatformCallID
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return nil, fmt.Errorf("encode calls: %w", err)
	}
	var pending []Pending
	err = db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, insert, string(body)); err != nil {
			return fmt.Errorf("insert calls: %w", err)
		}
		if err := tx.SelectContext(ctx, &pending, unpublished, pq.StringArray(keys)); err != nil {
			return fmt.Errorf("read unpublished calls: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("save %d calls: %w", len(calls), err)
	}
	return pending, nil
}

// MarkPublished records that the broker confirmed the call.finished of these calls.
func (s *Store) MarkPublished(ctx context.Context, callIDs []int64) error {
	const q = `UPDATE calls SET finished_published_at = now() WHERE id = ANY($1) AND finished_published_at IS NULL`
	if len(callIDs) == 0 {
		return nil
	}
	if _, err := s.conn.ExecContext(ctx, q, pq.Int64Array(callIDs)); err != nil {
		return fmt.Errorf("mark %d call.finished published: %w", len(callIDs), err)
	}
	return nil
}
