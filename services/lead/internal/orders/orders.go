// Package orders answers which orders exist and what their codes are, by asking the order service
// (GET /internal/orders/:id). Answers are cached in the process: a lead create must not cost a
// network hop per lead. An entry lives at most TTL and is dropped as soon as an order.updated
// event names its order; the whole cache is dropped whenever the event subscription (re)connects,
// since events may have been missed while it was down.
package orders

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
)

// Order is what leads need of an order: its code for lead references, and its dialing rules for
// planning the next call after each call (internal/callresult).
type Order struct {
	ID                 int64  `json:"id"`
	Code               string `json:"code"`
	IgnoreLeadTimezone bool   `json:"ignoreLeadTimezone"`
	// CallSchedule is Monday first, each day ["HH:MM","HH:MM"] or [] for a day off.
	CallSchedule [][]string `json:"callSchedule"`
	// CallHolidayOverrides are dates as dd.mm.yyyy.
	CallHolidayOverrides []string      `json:"callHolidayOverrides"`
	CallAttemptGroupID   *int64        `json:"callAttemptGroupId"`
	CallAttemptGroup     *AttemptGroup `json:"callAttemptGroup"`
	// AgentLeadCreationIsAllowed lets agents who work in the order create its leads.
	AgentLeadCreationIsAllowed bool `json:"agentLeadCreationIsAllowed"`
	// AgentLeadEditMode is when agents (call-center) may edit its leads: always, never, or
	// during-call (within a while after their own call with the lead).
	AgentLeadEditMode string `json:"agentLeadEditMode"`
	// AutoDialingEnabled lets dialers lease the order's leads (internal/dialer).
	AutoDialingEnabled bool `json:"autoDialingEnabled"`
	// QualifiedLeadsPerDayLimit stops the leases of a day once that many leads were qualified
	// (nil: no limit).
	QualifiedLeadsPerDayLimit *int64 `json:"qualifiedLeadsPerDayLimit"`
}

// AttemptGroup is the call-attempt interval group an order names (only the internal order read
// carries it).
type AttemptGroup struct {
	ID                   int64   `json:"id"`
	Intervals            []int64 `json:"intervals"` // minutes
	ResetAttemptsEnabled bool    `json:"resetAttemptsEnabled"`
}

// DefaultTTL bounds how stale a cached order can be if an event is lost.
const DefaultTTL = 60 * time.Second

// Directory looks orders up through the order service, with a cache in front.
type Directory struct {
	client *svcclient.Client
	ttl    time.Duration
	now    func() time.Time
	// scopes caches which orders each caller may see; dropped with the orders.
	scopes *visibleorders.Resolver

	mu      sync.Mutex
	entries map[int64]entry
	// gen counts invalidations: a fetch that started before one must not store what it read.
	gen uint64
}

type entry struct {
	order   Order
	expires time.Time
}

// NewDirectory asks the order service through client and caches answers for ttl.
func NewDirectory(client *svcclient.Client, ttl time.Duration) *Directory {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Directory{client: client, ttl: ttl, now: time.Now, entries: map[int64]entry{},
		scopes: visibleorders.New(client, visibleorders.DefaultTTL)}
}

// ScopeFor is the set of orders caller may see (the order service's rule, cached briefly and
// dropped with any order.updated event): only for what a yes decides (masking); whether an order
// is visible is CheckScope's, a list's scope FreshScope's.
func (d *Directory) ScopeFor(ctx context.Context, caller web.Caller) (visibleorders.Visible, error) {
	return d.scopes.For(ctx, caller)
}

// CheckScope tells whether caller may see order id; a no is never the cache's answer (the order
// may have been created or assigned a moment ago).
func (d *Directory) CheckScope(ctx context.Context, caller web.Caller, id int64) (visibleorders.Visible, bool, error) {
	return d.scopes.Check(ctx, caller, id)
}

// CheckScopeAsOf is CheckScope for a question asked at asOf and answered later (an import's rows):
// a scope read at or after asOf may say no.
func (d *Directory) CheckScopeAsOf(ctx context.Context, caller web.Caller, id int64, asOf time.Time) (visibleorders.Visible, bool, error) {
	return d.scopes.CheckAsOf(ctx, caller, id, asOf)
}

// FreshScope is the set of orders caller may see as the order service answers now, for lists.
func (d *Directory) FreshScope(ctx context.Context, caller web.Caller) (visibleorders.Visible, error) {
	return d.scopes.Fresh(ctx, caller)
}

// errUnknown is what fetch returns for an order the order service does not know.
var errUnknown = apperr.New(apperr.NotFound, "order does not exist")

// Get returns the order with id. An order that does not exist is an apperr NotFound error; the
// order service unreachable or failing is Unavailable.
func (d *Directory) Get(ctx context.Context, id int64) (Order, error) {
	if o, ok := d.cached(id); ok {
		return o, nil
	}
	return d.fetch(ctx, id)
}

// Check is the rule a lead's order reference follows: orderId names an existing order and
// orderCode is its code. A failed rule comes back as field errors named orderId / orderCode; an
// order service that cannot answer is Unavailable.
func (d *Directory) Check(ctx context.Context, id int64, code string) (Order, error) {
	o, err := d.Get(ctx, id)
	if err == nil && o.Code != code {
		// The cached code may be older than a change whose event has not arrived yet: ask again
		// before refusing the caller.
		o, err = d.fetch(ctx, id)
	}
	switch {
	case apperr.KindOf(err) == apperr.NotFound:
		return Order{}, apperr.Field("orderId", "no order has id "+strconv.FormatInt(id, 10))
	case err != nil:
		return Order{}, err
	case o.Code != code:
		return Order{}, apperr.Field("orderCode", fmt.Sprintf("does not match the code of order %d", id))
	}
	return o, nil
}

func (d *Directory) cached(id int64) (Order, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.entries[id]
	if !ok || d.now().After(e.expires) {
		return Order{}, false
	}
	return e.order, true
}

func (d *Directory) fetch(ctx context.Context, id int64) (Order, error) {
	d.mu.Lock()
	gen := d.gen
	d.mu.Unlock()
	var o Order
	err := d.client.Do(ctx, http.MethodGet, "/internal/orders/"+strconv.FormatInt(id, 10), nil, &o)
	switch kind := apperr.KindOf(err); {
	case err == nil:
	case kind == apperr.NotFound:
		// Unknown orders are not cached: the order may be created a moment later.
		return Order{}, errUnknown
	case kind == apperr.Unavailable:
		return Order{}, apperr.Wrap(apperr.Unavailable, err, "orderId: cannot be checked now, the order service is unavailable")
	default:
		// Any other refusal (a wrong internal token, say) is this deployment's fault, not the caller's.
		return Order{}, apperr.Wrap(apperr.Internal, err, "look up order %d", id)
	}
	d.mu.Lock()
	if d.gen == gen {
		d.entries[id] = entry{order: o, expires: d.now().Add(d.ttl)}
	}
	d.mu.Unlock()
	return o, nil
}

// Remember stores o as if the order service had just answered with it (to warm the cache, and in
// tests that need an order without the order service).
func (d *Directory) Remember(o Order) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.entries[o.ID] = entry{order: o, expires: d.now().Add(d.ttl)}
}

// Drop forgets the order with id (an order.updated event named it), and every caller's scope: its
// client or agents may have changed.
func (d *Directory) Drop(id int64) {
	d.scopes.Clear()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	delete(d.entries, id)
}

// Clear forgets every order and scope (the event subscription (re)connected and may have missed
// events).
func (d *Directory) Clear() {
	d.scopes.Clear()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	clear(d.entries)
}

// Len is the number of cached orders, for tests and diagnostics.
func (d *Directory) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.entries)
}
