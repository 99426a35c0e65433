package seed

import (
	"context"
	"fmt"
	"net/http"

	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/demo"
)

// CustomFields is the step, called name, that upserts fields into the custom-field catalog of the
// service c talks to (demo.OrderCustomFields through the order service, demo.LeadCustomFields
// through lead-api: both serve the same catalog route).
func CustomFields(name string, c *svcclient.Client, fields []demo.CustomField) Step {
	return Step{Name: name, Run: func(ctx context.Context) (string, error) {
		n, err := upsertEach(ctx, c, "/internal/custom-fields", fields)
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
