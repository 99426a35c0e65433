package seed

import (
	"context"
	"fmt"
	"net/http"

	"ccplatform/pkg/svcclient"
)

// CustomField is one custom-field definition as the owning service's internal API takes it;
// options are sent for the select types only.
type CustomField struct {
	Code    string   `json:"code"`
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Options []string `json:"options,omitempty"`
}

// OrderCustomFields is the step that upserts DemoOrderCustomFields through the order service.
func OrderCustomFields(order *svcclient.Client) Step {
	return Step{Name: "order custom fields", Run: func(ctx context.Context) (string, error) {
		n, err := upsertEach(ctx, order, "/internal/custom-fields", DemoOrderCustomFields())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d upserted", n), nil
	}}
}

// DemoOrderCustomFields has one order field of every custom-field type.
func DemoOrderCustomFields() []CustomField {
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

// upsertEach posts every item to a catalog's upsert route of another service, one request per item
// so that an error names the item; the catalogs are a handful of rows. A later LEAD_URL step loads
// lead statuses and lead custom fields the same way.
func upsertEach[T any](ctx context.Context, c *svcclient.Client, path string, items []T) (int, error) {
	for i, item := range items {
		if err := c.Do(ctx, http.MethodPost, path, item, nil); err != nil {
			return i, fmt.Errorf("item %d (%+v): %w", i, item, err)
		}
	}
	return len(items), nil
}
