// Package order holds orders: the campaign-like containers of leads with their dialing rules,
// schedules, agents and numbers. It owns the create, update and detail operations, the rules an
// order's fields follow, and the orders table.
package order

import (
	"encoding/json"
	"time"

	"ccplatform/pkg/apitime"

	"ccplatform/pkg/listquery"
)

// The enumerations of the contract.
var (
	Statuses                = []string{"success", "secondary", "info"}
	CallRecordRules         = []string{"client_is_connected", "agent_is_connected"}
	SipEndpointUsageSchemes = []string{"random_default", "random_without_repetition", "even_loaded", "even_loaded_daily"}
	AgentLeadEditModes      = []string{"during-call", "always", "never"}
	// PacingModes: how the paced lease decides how many leads to dial (services/lead README,
	// "Paced lease"); AbandonWindows: the period maxAbandonRatePercent is measured over.
	PacingModes    = []string{"preview", "progressive", "predictive"}
	AbandonWindows = []string{"24h", "30d"}
)

// Bounds of the pacing fields. More than 10 lines per agent drops more calls than any abandon
// limit allows; a lockout of more than a year is a mistake rather than a rule.
const (
	MaxLinesPerAgentCap = 10
	MaxDropLockoutHours = 8760
)

// Defaults of the fields a create may leave out (services/order/README.md). Booleans default to false,
// arrays to empty, nullable fields to null; the call-attempt group defaults to the default group.
const (
	DefaultCallRecordRule         = "client_is_connected"
	DefaultSipEndpointUsageScheme = "random_default"
	DefaultAgentLeadEditMode      = "never"
	// progressive dials one line per available agent: what a dialer that sends no limit expects
	// without tuning, and it never drops a call for want of an agent.
	DefaultPacingMode            = "progressive"
	DefaultMaxAbandonRatePercent = 3.0
	DefaultAbandonWindow         = "30d"
	DefaultMaxLinesPerAgent      = 3.0
	DefaultDropLockoutHours      = 72
)

// Order is an order as stored and returned. Each field is described once, in fields: its column,
// its name on the wire, and how it is written and shown.
type Order struct {
	ID                         int64
	Code                       string
	ServiceTitle               string
	Title                      string
	CallSchedule               Schedule
	CallHolidayOverrides       []time.Time // dates, midnight UTC
	AutoDialingEnabled         bool
	PredictiveModeEnabled      bool
	AIDefaultLanguage          *string
	AmdDetectionEnabled        bool
	CallRecordRule             string
	SipEndpointUsageScheme     string
	AgentUserIDs               []int64
	AgentGroupIDs              []int64
	ShowLeadContactsToAgent    bool
	CallAttemptGroupID         *int64
	QualifiedLeadsPerDayLimit  *int64
	CallScenarioID             *int64
	LeadTransformEnabled       bool
	Status                     string
	SpeechRecognitionEnabled   bool
	IgnoreLeadTimezone         bool
	SipEndpointIDs             []int64
	CustomValues               map[string]json.RawMessage // custom-field id to checked value
	AgentLeadCreationIsAllowed bool
	AgentLeadEditMode          string
	AutoProcessCall            bool
	TransferNumbers            []TransferNumber
	CreatedAt                  time.Time
	UpdatedAt                  time.Time
	CreatedBy                  *int64
	UpdatedBy                  *int64
	// ClientUserID is the client the order belongs to (nil: none).
	ClientUserID *int64
	// The paced lease's settings (services/lead README, "Paced lease").
	PacingMode            string
	MaxAbandonRatePercent float64
	AbandonWindow         string
	MaxLinesPerAgent      float64
	DropLockoutHours      int64
}

// TransferNumber is a number a call can be transferred to, with its display names by language.
type TransferNumber struct {
	Number string            `json:"number"`
	Names  map[string]string `json:"names"`
}

// New is an order with every default of a create; the fields the caller sends are applied on top.
func New(defaultCallAttemptGroupID *int64) Order {
	return Order{
		CallSchedule:           Schedule{},
		CallHolidayOverrides:   []time.Time{},
		CallRecordRule:         DefaultCallRecordRule,
		SipEndpointUsageScheme: DefaultSipEndpointUsageScheme,
		AgentUserIDs:           []int64{},
		AgentGroupIDs:          []int64{},
		CallAttemptGroupID:     defaultCallAttemptGroupID,
		SipEndpointIDs:         []int64{},
		CustomValues:           map[string]json.RawMessage{},
		AgentLeadEditMode:      DefaultAgentLeadEditMode,
		TransferNumbers:        []TransferNumber{},
		PacingMode:             DefaultPacingMode,
		MaxAbandonRatePercent:  DefaultMaxAbandonRatePercent,
		AbandonWindow:          DefaultAbandonWindow,
		MaxLinesPerAgent:       DefaultMaxLinesPerAgent,
		DropLockoutHours:       DefaultDropLockoutHours,
	}
}

// fields is the one description of an order's fields, in the order the API shows them: the column
// of the orders table, the name on the wire, where the value lives (a sql.Scanner and
// driver.Valuer for the columns whose Go type the driver does not know), who writes it, and its
// wire form when that is not the value itself. The store builds its statements from it (NewStore),
// the view its JSON (View). A field of Order missing here is refused by TestEveryFieldIsDescribed.
func (o *Order) fields() []field {
	return []field{
		{column: "id", name: "id", ptr: &o.ID, writes: byDatabase},
		{column: "code", name: "code", ptr: &o.Code},
		{column: "service_title", name: "serviceTitle", ptr: &o.ServiceTitle},
		{column: "title", name: "title", ptr: &o.Title},
		{column: "call_schedule", name: "callSchedule", ptr: &o.CallSchedule, wire: scheduleWire},
		{column: "call_holiday_overrides", name: "callHolidayOverrides", ptr: (*storedDates)(&o.CallHolidayOverrides),
			wire: holidaysWire},
		{column: "auto_dialing_enabled", name: "autoDialingEnabled", ptr: &o.AutoDialingEnabled},
		{column: "predictive_mode_enabled", name: "predictiveModeEnabled", ptr: &o.PredictiveModeEnabled},
		{column: "ai_default_language", name: "aiDefaultLanguage", ptr: &o.AIDefaultLanguage},
		{column: "amd_detection_enabled", name: "amdDetectionEnabled", ptr: &o.AmdDetectionEnabled},
		{column: "call_record_rule", name: "callRecordRule", ptr: &o.CallRecordRule},
		{column: "sip_endpoint_usage_scheme", name: "sipEndpointUsageScheme", ptr: &o.SipEndpointUsageScheme},
		{column: "agent_user_ids", name: "agentUserIds", ptr: (*storedIDs)(&o.AgentUserIDs),
			wire: func(o *Order) any { return listquery.List(o.AgentUserIDs) }},
		{column: "agent_group_ids", name: "agentGroupIds", ptr: (*storedIDs)(&o.AgentGroupIDs),
			wire: func(o *Order) any { return listquery.List(o.AgentGroupIDs) }},
		{column: "show_lead_contacts_to_agent", name: "showLeadContactsToAgent", ptr: &o.ShowLeadContactsToAgent},
		{column: "call_attempt_group_id", name: "callAttemptGroupId", ptr: &o.CallAttemptGroupID},
		{column: "qualified_leads_per_day_limit", name: "qualifiedLeadsPerDayLimit", ptr: &o.QualifiedLeadsPerDayLimit},
		{column: "call_scenario_id", name: "callScenarioId", ptr: &o.CallScenarioID},
		{column: "lead_transform_enabled", name: "leadTransformEnabled", ptr: &o.LeadTransformEnabled},
		{column: "status", name: "status", ptr: &o.Status},
		{column: "speech_recognition_enabled", name: "speechRecognitionEnabled", ptr: &o.SpeechRecognitionEnabled},
		{column: "ignore_lead_timezone", name: "ignoreLeadTimezone", ptr: &o.IgnoreLeadTimezone},
		{column: "sip_endpoint_ids", name: "sipEndpointIds", ptr: (*storedIDs)(&o.SipEndpointIDs),
			wire: func(o *Order) any { return listquery.List(o.SipEndpointIDs) }},
		{column: "custom_values", name: "customValues", ptr: (*storedCustomValues)(&o.CustomValues),
			wire: customValuesWire},
		{column: "agent_lead_creation_is_allowed", name: "agentLeadCreationIsAllowed", ptr: &o.AgentLeadCreationIsAllowed},
		{column: "agent_lead_edit_mode", name: "agentLeadEditMode", ptr: &o.AgentLeadEditMode},
		{column: "auto_process_call", name: "autoProcessCall", ptr: &o.AutoProcessCall},
		{column: "transfer_numbers", name: "transferNumbers", ptr: (*storedTransferNumbers)(&o.TransferNumbers),
			wire: transferNumbersWire},
		{column: "created_at", name: "createdAt", ptr: &o.CreatedAt, writes: byDatabase,
			wire: func(o *Order) any { return apitime.String(o.CreatedAt) }},
		{column: "updated_at", name: "updatedAt", ptr: &o.UpdatedAt, writes: stamped,
			wire: func(o *Order) any { return apitime.String(o.UpdatedAt) }},
		{column: "created_by", name: "createdBy", ptr: &o.CreatedBy, writes: byCreate},
		{column: "updated_by", name: "updatedBy", ptr: &o.UpdatedBy},
		{column: "client_user_id", name: "clientUserId", ptr: &o.ClientUserID},
		{column: "pacing_mode", name: "pacingMode", ptr: &o.PacingMode},
		{column: "max_abandon_rate_percent", name: "maxAbandonRatePercent", ptr: &o.MaxAbandonRatePercent},
		{column: "abandon_window", name: "abandonWindow", ptr: &o.AbandonWindow},
		{column: "max_lines_per_agent", name: "maxLinesPerAgent", ptr: &o.MaxLinesPerAgent},
		{column: "drop_lockout_hours", name: "dropLockoutHours", ptr: &o.DropLockoutHours},
	}
}
