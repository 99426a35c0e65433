package seed

import (
	"context"
	"fmt"
	"net/http"

	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/demo"
)

// OrderCustomFields is the step that upserts demo.OrderCustomFields through the order service.
func OrderCustomFields(order *svcclient.Client) Step {
	return Step{Name: "order custom fields", Run: func(ctx context.Context) (string, error) {
		n, err := upsertEach(ctx, order, "/internal/custom-fields", demo.OrderCustomFields())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d upserted", n), nil
	}}
}

// LeadCustomFields is the step that upserts demo.LeadCustomFields through lead-api.
func LeadCustomFields(lead *svcclient.Client) Step {
	return Step{Name: "lead custom fields", Run: func(ctx context.Context) (string, error) {
		n, err := upsertEach(ctx, lead, "/internal/custom-fields", demo.LeadCustomFields())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d upserted", n), nil
	}}
}

// upsertEach posts every item to a catalog's upsert route of another service, one request per item
// so that an error names the item; the catalogs are a handful of rows.
func upsertEach[T any](ctx context.Context, c *svcclient.Client, path string, items []T) (int, error) {
	for i, item := range items {
		if err := c.Do(ctx, http.MethodPost, path, item, nil); err != nil {
			return i, fmt.Errorf("item %d (%+v): %w", i, item, err)
		}
	}
	return len(items), nil
}
