// Package orderscope tells a service which orders a caller may see, as the order service decides
// (GET /internal/order-scope): the lead and call services narrow their lists and checks by it.
// Answers are cached per caller for a few seconds; the lead service also drops them on
// order.updated events.
package orderscope

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"
)

// Scope is the orders one caller may see: all of them, or those listed. HiddenContacts are those
// of them in which the caller sees lead phones masked (an agent, where the order's
// showLeadContactsToAgent is off).
type Scope struct {
	All            bool    `json:"all"`
	OrderIDs       []int64 `json:"orderIds"`
	HiddenContacts []int64 `json:"hiddenContacts"`
}

// Contains reports whether the caller may see order id.
func (s Scope) Contains(id int64) bool { return s.All || slices.Contains(s.OrderIDs, id) }

// ShowsContacts reports whether the caller sees the lead phones of order id unmasked: in every
// order they may see but those with hidden contacts. Outside the scope (an agent's own call in an
// order they no longer work in) they are masked.
func (s Scope) ShowsContacts(id int64) bool {
	return s.All || (slices.Contains(s.OrderIDs, id) && !slices.Contains(s.HiddenContacts, id))
}

// Narrow applies the scope to an order filter (empty: every order): the ids to filter by, and
// none=true when the caller may see no order the filter names, so the answer is empty without a
// query. A filter naming orders outside the scope simply matches nothing there.
func (s Scope) Narrow(filter []int64) (ids []int64, none bool) {
	if s.All {
		return filter, false
	}
	if len(filter) == 0 {
		return s.OrderIDs, len(s.OrderIDs) == 0
	}
	for _, id := range filter {
		if slices.Contains(s.OrderIDs, id) {
			ids = append(ids, id)
		}
	}
	return ids, len(ids) == 0
}

// DefaultTTL bounds how long a caller's scope is reused; a change of an order's client or agents
// (or of a user's agent groups) reaches the other services within it.
const DefaultTTL = 5 * time.Second

// Resolver asks the order service for callers' scopes, with a cache in front.
type Resolver struct {
	client *svcclient.Client
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	scope   Scope
	expires time.Time
}

// New asks through client (the order service) and keeps each answer for ttl.
func New(client *svcclient.Client, ttl time.Duration) *Resolver {
	return &Resolver{client: client, ttl: ttl, now: time.Now, entries: map[string]entry{}}
}

// For is the scope of caller. A call without a user (another service), and staff, see every order
// without asking.
func (r *Resolver) For(ctx context.Context, caller web.Caller) (Scope, error) {
	if caller.UserID == 0 || access.Group(caller.AccessGroup).SeesEveryOrder() {
		return Scope{All: true}, nil
	}
	key := strconv.FormatInt(caller.UserID, 10) + "/" + caller.AccessGroup
	r.mu.Lock()
	e, ok := r.entries[key]
	r.mu.Unlock()
	if ok && r.now().Before(e.expires) {
		return e.scope, nil
	}
	q := url.Values{"userId": {strconv.FormatInt(caller.UserID, 10)}, "accessGroup": {caller.AccessGroup}}
	var s Scope
	if err := r.client.Do(ctx, http.MethodGet, "/internal/order-scope?"+q.Encode(), nil, &s); err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return Scope{}, apperr.Wrap(apperr.Unavailable, err, "the caller's orders cannot be read now, the order service is unavailable")
		}
		return Scope{}, apperr.Wrap(apperr.Internal, err, "order scope of user %d", caller.UserID)
	}
	r.mu.Lock()
	if len(r.entries) > 10_000 {
		clear(r.entries)
	}
	r.entries[key] = entry{scope: s, expires: r.now().Add(r.ttl)}
	r.mu.Unlock()
	return s, nil
}

// Clear forgets every cached scope (an order's client or agents changed).
func (r *Resolver) Clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.entries)
}
