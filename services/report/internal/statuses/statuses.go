// Package statuses is the lead-status catalog as the lead service answers it (GET
// /internal/lead-statuses), cached: a report names every status and counts conversions, the
// entries into statuses of the success category.
package statuses

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
)

// Success is the category of the statuses a conversion enters.
const Success = "success"

// Status is one lead status.
type Status struct {
	ID       int64  `json:"id"`
	Code     string `json:"code"`
	Category string `json:"category"`
}

// TTL is how long the catalog is kept: it changes only with the lead service's migrations.
const TTL = time.Minute

// Catalog reads the catalog through the lead service, keeping it for TTL.
type Catalog struct {
	client *svcclient.Client
	mu     sync.Mutex
	list   []Status
	read   time.Time
}

// New reads through client (the lead service).
func New(client *svcclient.Client) *Catalog { return &Catalog{client: client} }

// List is the catalog in id order.
func (c *Catalog) List(ctx context.Context) ([]Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.list != nil && time.Since(c.read) < TTL {
		return c.list, nil
	}
	var out struct {
		List []Status `json:"list"`
	}
	if err := c.client.Do(ctx, http.MethodGet, "/internal/lead-statuses", nil, &out); err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return nil, apperr.Wrap(apperr.Unavailable, err, "the lead-status catalog cannot be read now, the lead service is unavailable")
		}
		return nil, apperr.Wrap(apperr.Internal, err, "lead-status catalog")
	}
	slices.SortFunc(out.List, func(a, b Status) int { return int(a.ID - b.ID) })
	c.list, c.read = out.List, time.Now()
	return c.list, nil
}
