package seed

import (
	"context"
	"fmt"

	"ccplatform/pkg/svcclient"
)

// LeadCustomFields is the step that upserts DemoLeadCustomFields through lead-api. Lead statuses
// need no step: the lead service seeds them in its own migration.
func LeadCustomFields(lead *svcclient.Client) Step {
	return Step{Name: "lead custom fields", Run: func(ctx context.Context) (string, error) {
		n, err := upsertEach(ctx, lead, "/internal/custom-fields", DemoLeadCustomFields())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d upserted", n), nil
	}}
}

// DemoLeadCustomFields has one lead field of every custom-field type.
func DemoLeadCustomFields() []CustomField {
	return []CustomField{
		{Code: "client_city", Name: "Client city", Type: "string"},
		{Code: "client_age", Name: "Client age", Type: "integer"},
		{Code: "budget", Name: "Budget, RUB", Type: "number"},
		{Code: "has_children", Name: "Has children", Type: "boolean"},
		{Code: "preferred_call_date", Name: "Preferred call date", Type: "date"},
		{Code: "contact_channel", Name: "Preferred contact channel", Type: "select",
			Options: []string{"phone", "messenger", "email"}},
		{Code: "interests", Name: "Interests", Type: "multiselect",
			Options: []string{"credit", "deposit", "insurance", "investment"}},
	}
}
