package order

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/web"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes orders and the languages catalog.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// row is an order as the orders table holds it. jsonb columns travel as text.
type row struct {
	ID                         int64          `db:"id"`
	Code                       string         `db:"code"`
	ServiceTitle               string         `db:"service_title"`
	Title                      string         `db:"title"`
	CallSchedule               string         `db:"call_schedule"`
	CallHolidayOverrides       pq.StringArray `db:"call_holiday_overrides"`
	AutoDialingEnabled         bool           `db:"auto_dialing_enabled"`
	PredictiveModeEnabled      bool           `db:"predictive_mode_enabled"`
	AIDefaultLanguage          *string        `db:"ai_default_language"`
	AmdDetectionEnabled        bool           `db:"amd_detection_enabled"`
	CallRecordRule             string         `db:"call_record_rule"`
	SipEndpointUsageScheme     string         `db:"sip_endpoint_usage_scheme"`
	AgentUserIDs               pq.Int64Array  `db:"agent_user_ids"`
	AgentGroupIDs              pq.Int64Array  `db:"agent_group_ids"`
	ShowLeadContactsToAgent    bool           `db:"show_lead_contacts_to_agent"`
	CallAttemptGroupID         *int64         `db:"call_attempt_group_id"`
	QualifiedLeadsPerDayLimit  *int64         `db:"qualified_leads_per_day_limit"`
	CallScenarioID             *int64         `db:"call_scenario_id"`
	LeadTransformEnabled       bool           `db:"lead_transform_enabled"`
	Status                     string         `db:"status"`
	SpeechRecognitionEnabled   bool           `db:"speech_recognition_enabled"`
	IgnoreLeadTimezone         bool           `db:"ignore_lead_timezone"`
	SipEndpointIDs             pq.Int64Array  `db:"sip_endpoint_ids"`
	CustomValues               string         `db:"custom_values"`
	AgentLeadCreationIsAllowed bool           `db:"agent_lead_creation_is_allowed"`
	AgentLeadEditMode          string         `db:"agent_lead_edit_mode"`
	AutoProcessCall            bool           `db:"auto_process_call"`
	TransferNumbers            string         `db:"transfer_numbers"`
	CreatedAt                  time.Time      `db:"created_at"`
	UpdatedAt                  time.Time      `db:"updated_at"`
	CreatedBy                  *int64         `db:"created_by"`
	UpdatedBy                  *int64         `db:"updated_by"`
	ClientUserID               *int64         `db:"client_user_id"`
}

const columns = `id, code, service_title, title, call_schedule, call_holiday_overrides, auto_dialing_enabled,
predictive_mode_enabled, ai_default_language, amd_detection_enabled, call_record_rule, sip_endpoint_usage_scheme,
agent_user_ids, agent_group_ids, show_lead_contacts_to_agent, call_attempt_group_id, qualified_leads_per_day_limit,
call_scenario_id, lead_transform_enabled, status, speech_recognition_enabled, ignore_lead_timezone, sip_endpoint_ids,
custom_values, agent_lead_creation_is_allowed, agent_lead_edit_mode, auto_process_call, transfer_numbers,
created_at, updated_at, created_by, updated_by, client_user_id`

func rowOf(o Order) (row, error) {
	schedule, err := json.Marshal(o.CallSchedule.Padded())
	if err != nil {
		return row{}, fmt.Errorf("encode schedule: %w", err)
	}
	custom, err := json.Marshal(nonNilMap(o.CustomValues))
	if err != nil {
		return row{}, fmt.Errorf("encode custom values: %w", err)
	}
	transfer, err := json.Marshal(web.List(o.TransferNumbers))
	if err != nil {
		return row{}, fmt.Errorf("encode transfer numbers: %w", err)
	}
	holidays := make(pq.StringArray, len(o.CallHolidayOverrides))
	for i, d := range o.CallHolidayOverrides {
		holidays[i] = d.Format(time.DateOnly)
	}
	return row{
		ID: o.ID, Code: o.Code, ServiceTitle: o.ServiceTitle, Title: o.Title,
		CallSchedule: string(schedule), CallHolidayOverrides: holidays,
		AutoDialingEnabled: o.AutoDialingEnabled, PredictiveModeEnabled: o.PredictiveModeEnabled,
		AIDefaultLanguage: o.AIDefaultLanguage, AmdDetectionEnabled: o.AmdDetectionEnabled,
		CallRecordRule: o.CallRecordRule, SipEndpointUsageScheme: o.SipEndpointUsageScheme,
		AgentUserIDs: web.List(o.AgentUserIDs), AgentGroupIDs: web.List(o.AgentGroupIDs),
		ShowLeadContactsToAgent: o.ShowLeadContactsToAgent, CallAttemptGroupID: o.CallAttemptGroupID,
		QualifiedLeadsPerDayLimit: o.QualifiedLeadsPerDayLimit, CallScenarioID: o.CallScenarioID,
		LeadTransformEnabled: o.LeadTransformEnabled, Status: o.Status,
		SpeechRecognitionEnabled: o.SpeechRecognitionEnabled, IgnoreLeadTimezone: o.IgnoreLeadTimezone,
		SipEndpointIDs: o.SipEndpointIDs, CustomValues: string(custom),
		AgentLeadCreationIsAllowed: o.AgentLeadCreationIsAllowed, AgentLeadEditMode: o.AgentLeadEditMode,
		AutoProcessCall: o.AutoProcessCall, TransferNumbers: string(transfer),
		CreatedBy: o.CreatedBy, UpdatedBy: o.UpdatedBy, ClientUserID: o.ClientUserID,
	}, nil
}

func (r row) order() (Order, error) {
	o := Order{
		ID: r.ID, Code: r.Code, ServiceTitle: r.ServiceTitle, Title: r.Title,
		AutoDialingEnabled: r.AutoDialingEnabled, PredictiveModeEnabled: r.PredictiveModeEnabled,
		AIDefaultLanguage: r.AIDefaultLanguage, AmdDetectionEnabled: r.AmdDetectionEnabled,
		CallRecordRule: r.CallRecordRule, SipEndpointUsageScheme: r.SipEndpointUsageScheme,
		AgentUserIDs: web.List([]int64(r.AgentUserIDs)), AgentGroupIDs: web.List([]int64(r.AgentGroupIDs)),
		ShowLeadContactsToAgent: r.ShowLeadContactsToAgent, CallAttemptGroupID: r.CallAttemptGroupID,
		QualifiedLeadsPerDayLimit: r.QualifiedLeadsPerDayLimit, CallScenarioID: r.CallScenarioID,
		LeadTransformEnabled: r.LeadTransformEnabled, Status: r.Status,
		SpeechRecognitionEnabled: r.SpeechRecognitionEnabled, IgnoreLeadTimezone: r.IgnoreLeadTimezone,
		SipEndpointIDs:             web.List([]int64(r.SipEndpointIDs)),
		AgentLeadCreationIsAllowed: r.AgentLeadCreationIsAllowed, AgentLeadEditMode: r.AgentLeadEditMode,
		AutoProcessCall: r.AutoProcessCall,
		CreatedAt:       r.CreatedAt, UpdatedAt: r.UpdatedAt, CreatedBy: r.CreatedBy, UpdatedBy: r.UpdatedBy,
		ClientUserID: r.ClientUserID,
	}
	if err := json.Unmarshal([]byte(r.CallSchedule), &o.CallSchedule); err != nil {
		return Order{}, fmt.Errorf("order %d: decode schedule: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.CustomValues), &o.CustomValues); err != nil {
		return Order{}, fmt.Errorf("order %d: decode custom values: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.TransferNumbers), &o.TransferNumbers); err != nil {
		return Order{}, fmt.Errorf("order %d: decode transfer numbers: %w", r.ID, err)
	}
	o.CallHolidayOverrides = make([]time.Time, 0, len(r.CallHolidayOverrides))
	for _, s := range r.CallHolidayOverrides {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return Order{}, fmt.Errorf("order %d: decode holiday %q: %w", r.ID, s, err)
		}
		o.CallHolidayOverrides = append(o.CallHolidayOverrides, d)
	}
	return o, nil
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// maxCodeAttempts bounds the retries of a generated code that another request took meanwhile.
const maxCodeAttempts = 10

// Create stores o and returns its id and code. When o.Code is empty the code is generated from the
// title; if a concurrent create takes the same code first, the unique index refuses ours and the
// next free code is tried. An explicit code that is taken is a conflict.
func (s *Store) Create(ctx context.Context, o Order) (id int64, code string, err error) {
	const q = `
INSERT INTO orders (code, service_title, title, call_schedule, call_holiday_overrides, auto_dialing_enabled,
    predictive_mode_enabled, ai_default_language, amd_detection_enabled, call_record_rule, sip_endpoint_usage_scheme,
    agent_user_ids, agent_group_ids, show_lead_contacts_to_agent, call_attempt_group_id, qualified_leads_per_day_limit,
    call_scenario_id, lead_transform_enabled, status, speech_recognition_enabled, ignore_lead_timezone, sip_endpoint_ids,
    custom_values, agent_lead_creation_is_allowed, agent_lead_edit_mode, auto_process_call, transfer_numbers,
    created_by, updated_by, client_user_id)
VALUES (:code, :service_title, :title, :call_schedule, :call_holiday_overrides, :auto_dialing_enabled,
    :predictive_mode_enabled, :ai_default_language, :amd_detection_enabled, :call_record_rule, :sip_endpoint_usage_scheme,
    :agent_user_ids, :agent_group_ids, :show_lead_contacts_to_agent, :call_attempt_group_id, :qualified_leads_per_day_limit,
    :call_scenario_id, :lead_transform_enabled, :status, :speech_recognition_enabled, :ignore_lead_timezone, :sip_endpoint_ids,
    :custom_values, :agent_lead_creation_is_allowed, :agent_lead_edit_mode, :auto_process_call, :transfer_numbers,
    :created_by, :updated_by, :client_user_id)
RETURNING id`
	generate := o.Code == ""
	base := CodeFromTitle(o.Title)
	for range maxCodeAttempts {
		if generate {
			taken, err := s.codesFrom(ctx, base)
			if err != nil {
				return 0, "", err
			}
			o.Code = FirstFreeCode(base, taken)
		}
		r, err := rowOf(o)
		if err != nil {
			return 0, "", err
		}
		query, args, err := sqlx.Named(q, r)
		if err != nil {
			return 0, "", fmt.Errorf("create order: bind: %w", err)
		}
		err = s.conn.GetContext(ctx, &id, s.conn.Rebind(query), args...)
		if c, ok := db.UniqueViolation(err); ok && c == "orders_code_key" && generate {
			continue
		}
		if err != nil {
			return 0, "", writeError("create order", o.Code, err)
		}
		return id, o.Code, nil
	}
	return 0, "", fmt.Errorf("create order: no free code from %q after %d attempts", base, maxCodeAttempts)
}

// codesFrom lists the codes that a code generated from base could collide with: base itself and
// base-<anything>. A prefix compare, not LIKE, because '_' in base is a LIKE wildcard.
func (s *Store) codesFrom(ctx context.Context, base string) ([]string, error) {
	const q = `SELECT code FROM orders WHERE code = $1 OR left(code, length($1) + 1) = $1 || '-'`
	var codes []string
	if err := s.conn.SelectContext(ctx, &codes, q, base); err != nil {
		return nil, fmt.Errorf("codes from %q: %w", base, err)
	}
	return codes, nil
}

// Get reads one order; an unknown id is NotFound.
func (s *Store) Get(ctx context.Context, id int64) (Order, error) {
	const q = `SELECT ` + columns + ` FROM orders WHERE id = $1`
	var r row
	if err := db.OneRow(s.conn.GetContext(ctx, &r, q, id), notFound(id), "get order %d", id); err != nil {
		return Order{}, err
	}
	return r.order()
}

// Update changes order id by fn inside one transaction, with the row locked so that concurrent
// partial updates of different fields do not undo each other, and records order.updated in the
// same transaction (published by the outbox relay after the commit). It returns the order as stored.
func (s *Store) Update(ctx context.Context, id int64, fn func(o *Order) error) (Order, error) {
	const (
		lock   = `SELECT ` + columns + ` FROM orders WHERE id = $1 FOR UPDATE`
		update = `
UPDATE orders SET
    code = :code, service_title = :service_title, title = :title, call_schedule = :call_schedule,
    call_holiday_overrides = :call_holiday_overrides, auto_dialing_enabled = :auto_dialing_enabled,
    predictive_mode_enabled = :predictive_mode_enabled, ai_default_language = :ai_default_language,
    amd_detection_enabled = :amd_detection_enabled, call_record_rule = :call_record_rule,
    sip_endpoint_usage_scheme = :sip_endpoint_usage_scheme, agent_user_ids = :agent_user_ids,
    agent_group_ids = :agent_group_ids, show_lead_contacts_to_agent = :show_lead_contacts_to_agent,
    call_attempt_group_id = :call_attempt_group_id, qualified_leads_per_day_limit = :qualified_leads_per_day_limit,
    call_scenario_id = :call_scenario_id, lead_transform_enabled = :lead_transform_enabled, status = :status,
    speech_recognition_enabled = :speech_recognition_enabled, ignore_lead_timezone = :ignore_lead_timezone,
    sip_endpoint_ids = :sip_endpoint_ids, custom_values = :custom_values,
    agent_lead_creation_is_allowed = :agent_lead_creation_is_allowed, agent_lead_edit_mode = :agent_lead_edit_mode,
    auto_process_call = :auto_process_call, transfer_numbers = :transfer_numbers,
    updated_at = now(), updated_by = :updated_by, client_user_id = :client_user_id
WHERE id = :id
RETURNING ` + columns
	)
	var out Order
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		var cur row
		if err := db.OneRow(tx.GetContext(ctx, &cur, lock, id), notFound(id), "lock order %d", id); err != nil {
			return err
		}
		o, err := cur.order()
		if err != nil {
			return err
		}
		if err := fn(&o); err != nil {
			return err
		}
		r, err := rowOf(o)
		if err != nil {
			return err
		}
		query, args, err := sqlx.Named(update, r)
		if err != nil {
			return fmt.Errorf("update order %d: bind: %w", id, err)
		}
		var saved row
		if err := tx.GetContext(ctx, &saved, tx.Rebind(query), args...); err != nil {
			return writeError(fmt.Sprintf("update order %d", id), o.Code, err)
		}
		if out, err = saved.order(); err != nil {
			return err
		}
		return announceUpdate(ctx, tx, out)
	})
	if err != nil {
		return Order{}, err
	}
	return out, nil
}

// Languages lists the codes of the available languages.
func (s *Store) Languages(ctx context.Context) ([]string, error) {
	const q = `SELECT code FROM languages ORDER BY code`
	var codes []string
	if err := s.conn.SelectContext(ctx, &codes, q); err != nil {
		return nil, fmt.Errorf("list languages: %w", err)
	}
	return codes, nil
}

func notFound(id int64) error {
	return apperr.NotFoundf("order %d does not exist", id)
}

// CodeTaken is the conflict of an explicit code that another order has.
func CodeTaken(code string) error {
	const rule = "is already used by another order"
	return &apperr.Error{Kind: apperr.Conflict, Message: "code: " + rule, Fields: apperr.FieldErrors{"code": rule}}
}

// writeError classifies a failed write: a taken code is a conflict, and a reference that vanished
// between its check and the write (a foreign key) is reported like a reference that never existed.
func writeError(op, code string, err error) error {
	if c, ok := db.UniqueViolation(err); ok && c == "orders_code_key" {
		return CodeTaken(code)
	}
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23503" {
		switch pe.Constraint {
		case "orders_call_attempt_group_id_fkey":
			return apperr.Field("callAttemptGroupId", "no call-attempt group has this id")
		case "orders_ai_default_language_fkey":
			return apperr.Field("aiDefaultLanguage", "is not an available language")
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// VisibleTo lists, by id, the orders c may see when c does not see them all (SeesAll): a
// client's own, or those an agent or the agent's groups work in (the same rule as CanSee, in
// SQL); hidden are those of them whose lead contacts c may not see (an agent, in an order with
// showLeadContactsToAgent off).
func (s *Store) VisibleTo(ctx context.Context, c Caller) (ids, hidden []int64, err error) {
	const q = `SELECT id, show_lead_contacts_to_agent FROM orders
		WHERE ($1 AND client_user_id = $2) OR ($3 AND ($2 = ANY(agent_user_ids) OR agent_group_ids && $4::bigint[]))
		ORDER BY id`
	groups := c.GroupIDs
	if groups == nil {
		groups = []int64{}
	}
	var rows []struct {
		ID   int64 `db:"id"`
		Show bool  `db:"show_lead_contacts_to_agent"`
	}
	if err := s.conn.SelectContext(ctx, &rows, q, c.Group == access.Client, c.UserID, c.isAgent(), pq.Array(groups)); err != nil {
		return nil, nil, fmt.Errorf("orders visible to user %d: %w", c.UserID, err)
	}
	ids, hidden = []int64{}, []int64{}
	for _, r := range rows {
		ids = append(ids, r.ID)
		if c.isAgent() && !r.Show {
			hidden = append(hidden, r.ID)
		}
	}
	return ids, hidden, nil
}
