// Package lead holds leads: the clients an order's agents call. It owns the field rules (phone
// normalisation, time-zone inference, sources, secondary-lead links), the leads table, and the v2
// operations create, update, detail and list. The v1 operations (package leadv1) and the
// asynchronous creates (packages job and worker) map onto the same rules and store.
package lead

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"ccplatform/pkg/apitime"
)

// Lead types and the ways a lead is created (docs/api.md, "Lead": createMethod).
const (
	TypeStraight  = "straight"
	TypeSelection = "selection"

	MethodAPIv2      = "api_v2"
	MethodAPIv2Async = "api_v2_async"
	MethodAPIv1      = "api_v1"
	MethodAPIv1Async = "api_v1_async"
	// MethodAPIv2Import is a row of a bulk import (internal/imports).
	MethodAPIv2Import = "api_v2_import"
)

// Types lists the lead types.
var Types = []string{TypeStraight, TypeSelection}

// Sources that need no ad system.
const (
	SourceOrganic    = "organic"
	SourceNonOrganic = "non-organic"
)

// Lead is a lead as stored. It is also the row of the leads table.
type Lead struct {
	ID                int64        `db:"id"`
	OrderID           int64        `db:"order_id"`
	OrderCode         string       `db:"order_code"`
	Phone             string       `db:"phone"`
	Name              *string      `db:"name"`
	SourceComment     *string      `db:"source_comment"`
	IP                *string      `db:"ip"`
	ExternalIDCrmA    *string      `db:"external_id_crm_a"`
	ExternalIDCrmB    *string      `db:"external_id_crm_b"`
	ExternalIDCrmC    *string      `db:"external_id_crm_c"`
	ExternalIDCrmD    *string      `db:"external_id_crm_d"`
	StatusID          int64        `db:"status_id"`
	LeadType          string       `db:"lead_type"`
	CreateMethod      string       `db:"create_method"`
	Source            string       `db:"source"`
	AdCampaignID      *string      `db:"ad_campaign_id"`
	IsSecondary       bool         `db:"is_secondary"`
	PreviousLeadID    *int64       `db:"previous_lead_id"`
	NextLeadID        *int64       `db:"next_lead_id"`
	PlanningCallAt    *time.Time   `db:"planning_call_at"`
	Priority          int64        `db:"priority"`
	UTCOffset         *int64       `db:"utc_offset"`
	SocialNetworkID   *int64       `db:"social_network_id"`
	SocialLogin       *string      `db:"social_login"`
	MessengerUserName *string      `db:"messenger_user_name"`
	MessengerPhone    *string      `db:"messenger_phone"`
	MessengerID       *int64       `db:"messenger_id"`
	CustomValues      CustomValues `db:"custom_values"`
	JobID             *string      `db:"job_id"`
	CreatedBy         *int64       `db:"created_by"`
	CreatedAt         time.Time    `db:"created_at"`
	UpdatedAt         time.Time    `db:"updated_at"`
	// DoNotCall is true when the phone is on the do-not-call list for the lead's order (read, not
	// stored: internal/dnc).
	DoNotCall bool `db:"do_not_call"`
}

// CustomValues maps a custom-field id (as text) to its checked value; stored as jsonb.
type CustomValues map[string]json.RawMessage

// Value stores the map as JSON ({} when empty). It is text, not []byte: the connections send
// parameters in one round trip (wiring.OpenDB), which passes []byte in binary format, and jsonb's
// binary format is not plain JSON.
func (cv CustomValues) Value() (driver.Value, error) {
	if len(cv) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]json.RawMessage(cv))
	if err != nil {
		return nil, fmt.Errorf("encode custom values: %w", err)
	}
	return string(b), nil
}

// Scan reads the jsonb column.
func (cv *CustomValues) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	case nil:
		*cv = CustomValues{}
		return nil
	default:
		return errors.New("custom values: unexpected column type")
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("decode custom values: %w", err)
	}
	*cv = m
	return nil
}

// Meta is what a create knows besides the body: how it was made and by whom.
type Meta struct {
	CreateMethod string
	IP           *string
	CreatedBy    *int64
	// JobID is set for asynchronous creates.
	JobID *string
}

// TimeLayout is the API's instant layout (apitime.Layout) under the name the import views use.
const TimeLayout = apitime.Layout

// View is the wire form of a lead (getLead). It has every Lead field of the contract except
// previousLeadId and nextLeadId, which only the list shows; messengerId (a v1 field) is added.
type View struct {
	ID                   int64        `json:"id"`
	Name                 *string      `json:"name"`
	Phone                string       `json:"phone"`
	SourceComment        *string      `json:"sourceComment"`
	IP                   *string      `json:"ip"`
	ExternalIDCrmA       *string      `json:"externalIdCrmA"`
	ExternalIDCrmB       *string      `json:"externalIdCrmB"`
	ExternalIDCrmC       *string      `json:"externalIdCrmC"`
	ExternalIDCrmD       *string      `json:"externalIdCrmD"`
	StatusID             int64        `json:"statusId"`
	LeadType             string       `json:"leadType"`
	CreateMethod         string       `json:"createMethod"`
	Source               string       `json:"source"`
	IsSecondary          bool         `json:"isSecondary"`
	PlanningCallDateTime *string      `json:"planningCallDateTime"`
	Priority             int64        `json:"priority"`
	UTCOffset            *int64       `json:"utcOffset"`
	CreatedAt            string       `json:"createdAt"`
	UpdatedAt            string       `json:"updatedAt"`
	OrderID              int64        `json:"orderId"`
	OrderCode            string       `json:"orderCode"`
	SocialNetworkID      *string      `json:"socialNetworkId"`
	SocialLogin          *string      `json:"socialLogin"`
	MessengerUserName    *string      `json:"messengerUserName"`
	MessengerPhone       *string      `json:"messengerPhone"`
	MessengerID          *int64       `json:"messengerId"`
	AdCampaignID         *string      `json:"adCampaignId"`
	CustomValues         CustomValues `json:"customValues"`
	// DoNotCall: the phone is on the do-not-call list (for this order or every order); the lead is
	// kept but never leased to a dialer.
	DoNotCall bool `json:"doNotCall"`
}

// ListItem is the wire form of a lead in the list (listLeads): the detail plus the links
// between a lead and its repeats.
type ListItem struct {
	View
	PreviousLeadID *int64 `json:"previousLeadId"`
	NextLeadID     *int64 `json:"nextLeadId"`
}

// ViewOf is the wire form of l.
func ViewOf(l Lead) View {
	v := View{
		ID: l.ID, Name: l.Name, Phone: l.Phone, SourceComment: l.SourceComment, IP: l.IP,
		ExternalIDCrmA: l.ExternalIDCrmA, ExternalIDCrmB: l.ExternalIDCrmB,
		ExternalIDCrmC: l.ExternalIDCrmC, ExternalIDCrmD: l.ExternalIDCrmD,
		StatusID: l.StatusID, LeadType: l.LeadType, CreateMethod: l.CreateMethod, Source: l.Source,
		IsSecondary: l.IsSecondary, Priority: l.Priority, UTCOffset: l.UTCOffset,
		CreatedAt: apitime.String(l.CreatedAt), UpdatedAt: apitime.String(l.UpdatedAt), PlanningCallDateTime: apitime.StringOrNull(l.PlanningCallAt),
		OrderID: l.OrderID, OrderCode: l.OrderCode, SocialLogin: l.SocialLogin,
		MessengerUserName: l.MessengerUserName, MessengerPhone: l.MessengerPhone, MessengerID: l.MessengerID,
		AdCampaignID: l.AdCampaignID, CustomValues: l.CustomValues, DoNotCall: l.DoNotCall,
	}
	if v.CustomValues == nil {
		v.CustomValues = CustomValues{}
	}
	if l.SocialNetworkID != nil {
		// The Lead table types socialNetworkId as a string.
		s := fmt.Sprint(*l.SocialNetworkID)
		v.SocialNetworkID = &s
	}
	return v
}

// ListItemOf is the list form of l.
func ListItemOf(l Lead) ListItem {
	return ListItem{View: ViewOf(l), PreviousLeadID: l.PreviousLeadID, NextLeadID: l.NextLeadID}
}
