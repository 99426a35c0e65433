// Package call serves the Call resource: the filtered list (listCalls) and one call (getCall).
// Calls are written only by the ingest consumer; this package reads them.
package call

import (
	"time"

	"ccplatform/pkg/apitime"
)

// Record is a call as stored.
type Record struct {
	ID                      int64     `db:"id"`
	SipEndpointID           int64     `db:"sip_endpoint_id"`
	FinishInitiator         *string   `db:"finish_initiator"`
	Direction               string    `db:"direction"`
	LeadID                  int64     `db:"lead_id"`
	UserID                  int64     `db:"user_id"`
	OrderID                 int64     `db:"order_id"`
	StatusID                int64     `db:"status_id"`
	TotalDurationSeconds    int       `db:"total_duration_seconds"`
	WaitTimeDurationSeconds int       `db:"wait_time_duration_seconds"`
	TalkTimeDurationSeconds int       `db:"talk_time_duration_seconds"`
	IsPredictive            bool      `db:"is_predictive"`
	ClientPhone             string    `db:"client_phone"`
	HasRecords              bool      `db:"has_records"`
	CreatedAt               time.Time `db:"created_at"`
}

// Call is the Call object of the contract, members in the contract's order.
type Call struct {
	ID                      int64   `json:"id"`
	SipEndpointID           int64   `json:"sipEndpointId"`
	FinishInitiator         *string `json:"finishInitiator"`
	Direction               string  `json:"direction"`
	LeadID                  int64   `json:"leadId"`
	UserID                  int64   `json:"userId"`
	OrderID                 int64   `json:"orderId"`
	StatusID                int64   `json:"statusId"`
	TotalDurationSeconds    int     `json:"totalDurationSeconds"`
	WaitTimeDurationSeconds int     `json:"waitTimeDurationSeconds"`
	TalkTimeDurationSeconds int     `json:"talkTimeDurationSeconds"`
	IsPredictive            bool    `json:"isPredictive"`
	ClientPhone             string  `json:"clientPhone"`
	HasRecords              bool    `json:"hasRecords"`
	CreatedAt               string  `json:"createdAt"`
}

// ViewOf is the wire form of a stored call: the phone as E.164 digits without "+", the time in UTC.
func ViewOf(r Record) Call {
	return Call{
		ID:                      r.ID,
		SipEndpointID:           r.SipEndpointID,
		FinishInitiator:         r.FinishInitiator,
		Direction:               r.Direction,
		LeadID:                  r.LeadID,
		UserID:                  r.UserID,
		OrderID:                 r.OrderID,
		StatusID:                r.StatusID,
		TotalDurationSeconds:    r.TotalDurationSeconds,
		WaitTimeDurationSeconds: r.WaitTimeDurationSeconds,
		TalkTimeDurationSeconds: r.TalkTimeDurationSeconds,
		IsPredictive:            r.IsPredictive,
		ClientPhone:             phoneDigits(r.ClientPhone),
		HasRecords:              r.HasRecords,
		CreatedAt:               apitime.String(r.CreatedAt),
	}
}

// phoneDigits drops a leading "+": the contract returns the client phone as bare E.164 digits.
// Stored phones are digits already; this keeps the rule in one place should that ever change.
func phoneDigits(p string) string {
	if len(p) > 0 && p[0] == '+' {
		return p[1:]
	}
	return p
}
