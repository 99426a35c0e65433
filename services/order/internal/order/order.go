// Package order holds orders: the campaign-like containers of leads with their dialing rules,
// schedules, agents and numbers. It owns the create, update and detail operations, the rules an
// order's fields follow, and the orders table.
package order

import (
	"encoding/json"
	"time"

	"ccplatform/pkg/web"
)

// The enumerations of the contract.
var (
	Statuses                = []string{"success", "secondary", "info"}
	CallRecordRules         = []string{"client_is_connected", "agent_is_connected"}
	SipEndpointUsageSchemes = []string{"random_default", "random_without_repetition", "even_loaded", "even_loaded_daily"}
	AgentLeadEditModes      = []string{"during-call", "always", "never"}
)

// Defaults of the fields a create may leave out (services/order/README.md). Booleans default to false,
// arrays to empty, nullable fields to null; the call-attempt group defaults to the default group.
const (
	DefaultCallRecordRule         = "client_is_connected"
	DefaultSipEndpointUsageScheme = "random_default"
	DefaultAgentLeadEditMode      = "never"
)

// Order is an order as stored and returned.
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
	}
}

// HolidayLayout is how holiday dates are returned (dd.mm.yyyy).
const HolidayLayout = "02.01.2006"

// View is the wire form of an order (getOrder and the internal read).
type View struct {
	ID                         int64            `json:"id"`
	Code                       string           `json:"code"`
	ServiceTitle               string           `json:"serviceTitle"`
	Title                      string           `json:"title"`
	CallSchedule               Schedule         `json:"callSchedule"`
	CallHolidayOverrides       []string         `json:"callHolidayOverrides"`
	AutoDialingEnabled         bool             `json:"autoDialingEnabled"`
	PredictiveModeEnabled      bool             `json:"predictiveModeEnabled"`
	AIDefaultLanguage          *string          `json:"aiDefaultLanguage"`
	AmdDetectionEnabled        bool             `json:"amdDetectionEnabled"`
	CallRecordRule             string           `json:"callRecordRule"`
	SipEndpointUsageScheme     string           `json:"sipEndpointUsageScheme"`
	AgentUserIDs               []int64          `json:"agentUserIds"`
	AgentGroupIDs              []int64          `json:"agentGroupIds"`
	ShowLeadContactsToAgent    bool             `json:"showLeadContactsToAgent"`
	CallAttemptGroupID         *int64           `json:"callAttemptGroupId"`
	QualifiedLeadsPerDayLimit  *int64           `json:"qualifiedLeadsPerDayLimit"`
	CallScenarioID             *int64           `json:"callScenarioId"`
	LeadTransformEnabled       bool             `json:"leadTransformEnabled"`
	Status                     string           `json:"status"`
	SpeechRecognitionEnabled   bool             `json:"speechRecognitionEnabled"`
	IgnoreLeadTimezone         bool             `json:"ignoreLeadTimezone"`
	SipEndpointIDs             []int64          `json:"sipEndpointIds"`
	CustomValues               any              `json:"customValues"`
	AgentLeadCreationIsAllowed bool             `json:"agentLeadCreationIsAllowed"`
	AgentLeadEditMode          string           `json:"agentLeadEditMode"`
	AutoProcessCall            bool             `json:"autoProcessCall"`
	TransferNumbers            []transferNumber `json:"transferNumbers"`
	CreatedAt                  string           `json:"createdAt"`
	UpdatedAt                  string           `json:"updatedAt"`
	CreatedBy                  *int64           `json:"createdBy"`
	UpdatedBy                  *int64           `json:"updatedBy"`
	ClientUserID               *int64           `json:"clientUserId"`
}

// transferNumber is the wire form: names is an object, or [] when there are none (contract).
type transferNumber struct {
	Number string `json:"number"`
	Names  any    `json:"names"`
}

// emptyList is how the contract writes an empty map: as an empty array.
var emptyList = json.RawMessage("[]")

// ViewOf is the wire form of o.
func ViewOf(o Order) View {
	v := View{
		ID:                         o.ID,
		Code:                       o.Code,
		ServiceTitle:               o.ServiceTitle,
		Title:                      o.Title,
		CallSchedule:               o.CallSchedule.Padded(),
		CallHolidayOverrides:       make([]string, 0, len(o.CallHolidayOverrides)),
		AutoDialingEnabled:         o.AutoDialingEnabled,
		PredictiveModeEnabled:      o.PredictiveModeEnabled,
		AIDefaultLanguage:          o.AIDefaultLanguage,
		AmdDetectionEnabled:        o.AmdDetectionEnabled,
		CallRecordRule:             o.CallRecordRule,
		SipEndpointUsageScheme:     o.SipEndpointUsageScheme,
		AgentUserIDs:               web.List(o.AgentUserIDs),
		AgentGroupIDs:              web.List(o.AgentGroupIDs),
		ShowLeadContactsToAgent:    o.ShowLeadContactsToAgent,
		CallAttemptGroupID:         o.CallAttemptGroupID,
		QualifiedLeadsPerDayLimit:  o.QualifiedLeadsPerDayLimit,
		CallScenarioID:             o.CallScenarioID,
		LeadTransformEnabled:       o.LeadTransformEnabled,
		Status:                     o.Status,
		SpeechRecognitionEnabled:   o.SpeechRecognitionEnabled,
		IgnoreLeadTimezone:         o.IgnoreLeadTimezone,
		SipEndpointIDs:             web.List(o.SipEndpointIDs),
		CustomValues:               emptyList,
		AgentLeadCreationIsAllowed: o.AgentLeadCreationIsAllowed,
		AgentLeadEditMode:          o.AgentLeadEditMode,
		AutoProcessCall:            o.AutoProcessCall,
		TransferNumbers:            make([]transferNumber, 0, len(o.TransferNumbers)),
		CreatedAt:                  web.Time(o.CreatedAt),
		UpdatedAt:                  web.Time(o.UpdatedAt),
		CreatedBy:                  o.CreatedBy,
		UpdatedBy:                  o.UpdatedBy,
		ClientUserID:               o.ClientUserID,
	}
	for _, d := range o.CallHolidayOverrides {
		v.CallHolidayOverrides = append(v.CallHolidayOverrides, d.Format(HolidayLayout))
	}
	if len(o.CustomValues) > 0 {
		v.CustomValues = o.CustomValues
	}
	for _, t := range o.TransferNumbers {
		w := transferNumber{Number: t.Number, Names: emptyList}
		if len(t.Names) > 0 {
			w.Names = t.Names
		}
		v.TransferNumbers = append(v.TransferNumbers, w)
	}
	return v
}
