// Package leadv1 maps the earlier version of the lead operations (createLeadV1,
// createLeadAsyncV1, updateLeadV1: snake_case bodies) onto the same leads, rules and store as
// version 2 (docs/api.md, "Versions"): each v1 field becomes its v2 field, the v2 rules run, and
// every error names the field as the v1 caller sent it.
package leadv1

import (
	"encoding/json"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/lead"
)

// Input is a v1 create or update body.
type Input struct {
	LeadType          optional.Value[string]          `json:"lead_type"`
	ClientPhone       optional.Value[string]          `json:"client_phone"`
	OrderID           optional.Value[int64]           `json:"order_id"`
	OrderCode         optional.Value[string]          `json:"order_code"`
	MessengerID       optional.Value[json.RawMessage] `json:"messengerId"`
	SocialNetworkID   optional.Value[json.RawMessage] `json:"socialNetworkId"`
	SocialLogin       optional.Value[string]          `json:"socialLogin"`
	ClientName        optional.Value[string]          `json:"client_name"`
	QuizLog           optional.Value[json.RawMessage] `json:"quiz_log"`
	CampaignID        optional.Value[string]          `json:"campaign_id"`
	ExternalID        optional.Value[string]          `json:"external_id"`
	Priority          optional.Value[int64]           `json:"priority"`
	UTCOffset         optional.Value[int64]           `json:"utc_offset"`
	Status            optional.Value[int64]           `json:"status"`
	CallTimestamp     optional.Value[json.RawMessage] `json:"call_timestamp"`
	MessengerUserName optional.Value[string]          `json:"messengerUserName"`
	MessengerPhone    optional.Value[string]          `json:"messengerPhone"`
}

// Names maps each v2 field name to the v1 name of the same field; fields with the same name in
// both versions are not listed.
var Names = map[string]string{
	"leadType":             "lead_type",
	"phone":                "client_phone",
	"orderId":              "order_id",
	"orderCode":            "order_code",
	"name":                 "client_name",
	"sourceComment":        "quiz_log",
	"adCampaignId":         "campaign_id",
	"externalIdCrmA":       "external_id",
	"utcOffset":            "utc_offset",
	"statusId":             "status",
	"planningCallDateTime": "call_timestamp",
}

// V2 is the v2 body with the same meaning.
func (in Input) V2() lead.Input {
	return lead.Input{
		LeadType:             in.LeadType,
		Phone:                in.ClientPhone,
		OrderID:              in.OrderID,
		OrderCode:            in.OrderCode,
		MessengerID:          in.MessengerID,
		SocialNetworkID:      in.SocialNetworkID,
		SocialLogin:          in.SocialLogin,
		Name:                 in.ClientName,
		SourceComment:        in.QuizLog,
		AdCampaignID:         in.CampaignID,
		ExternalIDCrmA:       in.ExternalID,
		Priority:             in.Priority,
		UTCOffset:            in.UTCOffset,
		StatusID:             in.Status,
		PlanningCallDateTime: in.CallTimestamp,
		MessengerUserName:    in.MessengerUserName,
		MessengerPhone:       in.MessengerPhone,
	}
}

// Check runs the v2 rules on the body, with v1's own required fields on create (messengerId,
// socialNetworkId and socialLogin besides the v2 ones), and names every broken field as v1 does.
func Check(svc *lead.Service, in Input, mode lead.Mode) (lead.Changes, error) {
	ch, err := svc.CheckBody(in.V2(), mode)
	fe := apperr.FieldErrors{}
	if e, ok := apperr.As(err); ok {
		for f, r := range e.Fields {
			fe.Add(f, r)
		}
	} else if err != nil {
		return lead.Changes{}, err
	}
	if mode == lead.ForCreate {
		for field, sent := range map[string]bool{
			"messengerId":     in.MessengerID.Present(),
			"socialNetworkId": in.SocialNetworkID.Present(),
			"socialLogin":     in.SocialLogin.Present(),
		} {
			if !sent {
				fe.Add(field, "is required")
			}
		}
	}
	if err := fe.Err(); err != nil {
		return lead.Changes{}, lead.RenameFields(err, Names)
	}
	return ch, nil
}

// Decode reads a v1 body (as sent) and checks it for a create: the worker's path for v1 jobs.
func Decode(svc *lead.Service, body []byte) (lead.Changes, error) {
	var in Input
	if err := web.Unmarshal(body, &in); err != nil {
		return lead.Changes{}, err
	}
	return Check(svc, in, lead.ForCreate)
}
