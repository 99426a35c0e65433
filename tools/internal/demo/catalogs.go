package demo

// CustomField is one custom-field definition as the owning service's internal API takes it;
// options are sent for the select types only.
type CustomField struct {
	Code    string   `json:"code"`
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Options []string `json:"options,omitempty"`
}

// OrderCustomFields has one order field of every custom-field type.
func OrderCustomFields() []CustomField {
	return []CustomField{
		{Code: "client_company", Name: "Client company", Type: "string"},
		{Code: "monthly_lead_target", Name: "Monthly lead target", Type: "integer"},
		{Code: "cost_per_lead", Name: "Cost per lead, RUB", Type: "number"},
		{Code: "requires_call_script_review", Name: "Call script needs review", Type: "boolean"},
		{Code: "campaign_start_date", Name: "Campaign start date", Type: "date"},
		{Code: "industry", Name: "Industry", Type: "select",
			Options: []string{"real_estate", "automotive", "education", "healthcare", "finance"}},
		{Code: "target_regions", Name: "Target regions", Type: "multiselect",
			Options: []string{"moscow", "saint_petersburg", "kazan", "novosibirsk", "yekaterinburg"}},
	}
}

// LeadCustomFields has one lead field of every custom-field type. Lead statuses have no demo
// catalog: the lead service seeds them in its own migration.
func LeadCustomFields() []CustomField {
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
