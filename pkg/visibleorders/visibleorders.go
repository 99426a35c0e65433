// Package visibleorders tells a service which orders a caller may see, as the order service decides
// (GET /internal/order-scope): the lead and call services narrow their lists and checks by it,
// the webhook fan-out its deliveries.
//
// Answers are cached per caller for at most DefaultTTL, and the cache only ever says yes: an order
// missing from a cached scope is asked about again before the caller is told "no order" (an order
// created or an agent assigned a moment ago), and lists ask every time (Fresh). What the cache can
// still get wrong is a yes for an order taken away less than the TTL ago. Concurrent questions
// about one caller share one call. The rule is written down in docs/architecture.md ("Order
// scopes and keys").
package visibleorders

import (
	"context"
	"fmt"
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

// Visible is the orders one caller may see: all of them, or those listed. HiddenContacts are those
// of them in which the caller sees lead phones masked (an agent, where the order's
// showLeadContactsToAgent is off).
type Visible struct {
	All            bool    `json:"all"`
	OrderIDs       []int64 `json:"orderIds"`
	HiddenContacts []int64 `json:"hiddenContacts"`
}

// Contains reports whether the caller may see order id.
func (s Visible) Contains(id int64) bool { return s.All || slices.Contains(s.OrderIDs, id) }

// ShowsContacts reports whether the caller sees the lead phones of order id unmasked: in every
// order they may see but those with hidden contacts. Outside the scope (an agent's own call in an
// order they no longer work in) they are masked.
func (s Visible) ShowsContacts(id int64) bool {
	return s.All || (slices.Contains(s.OrderIDs, id) && !slices.Contains(s.HiddenContacts, id))
}

// Narrow applies the scope to an order filter (empty: every order): the ids to filter by, and
// none=true when the caller may see no order the filter names, so the answer is empty without a
// query. A filter naming orders outside the scope simply matches nothing there.
func (s Visible) Narrow(filter []int64) (ids []int64, none bool) {
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

// DefaultTTL bounds how long a caller's scope answers yes without asking: an order taken away
// from a caller (its client changed, an agent removed) stops being seen within it.
const DefaultTTL = time.Second

// Resolver asks the order service for callers' scopes, with a cache in front.
type Resolver struct {
	client *svcclient.Client
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]entry
	flights map[string]*flight
	// gen counts Clears: a flight that started before one must not store what it read.
	gen uint64
}

// entry is a cached answer and when the call that got it started: it reflects every change made
// before that instant.
type entry struct {
	scope   Visible
	fetched time.Time
}

// flight is one call to the order service in progress, shared by everyone asking about its caller
// who can use an answer read from started on.
type flight struct {
	started time.Time
	done    chan struct{}
	scope   Visible
	err     error
}

// New asks through client (the order service) and keeps each answer for ttl (at most DefaultTTL
// is the rule everywhere; tests use longer ones).
func New(client *svcclient.Client, ttl time.Duration) *Resolver {
	return &Resolver{client: client, ttl: ttl, now: time.Now, entries: map[string]entry{}, flights: map[string]*flight{}}
}

// For is the scope of caller, cached: only for what a yes answers (masking the contacts of an
// order already known visible). Whether an order is visible is Check's; a list's scope is Fresh's.
// A call without a user (another service), and staff, see every order without asking (here and
// in every method).
func (r *Resolver) For(ctx context.Context, caller web.Caller) (Visible, error) {
	s, _, err := r.get(ctx, caller, time.Time{})
	return s, err
}

// Fresh is the scope of caller as the order service answers from now on: a list asks it, so that
// an order created or assigned just before is in it (a call already in progress that started
// before now is waited for, then one more is made for everyone who waited).
func (r *Resolver) Fresh(ctx context.Context, caller web.Caller) (Visible, error) {
	if seesAll(caller) {
		return Visible{All: true}, nil
	}
	s, _, err := r.get(ctx, caller, r.now())
	return s, err
}

// Check tells whether caller may see order id: a cached scope that contains it answers yes, and
// one that does not is asked for again before answering no. The scope returned is the one that
// answered (for masking).
func (r *Resolver) Check(ctx context.Context, caller web.Caller, id int64) (Visible, bool, error) {
	if seesAll(caller) {
		return Visible{All: true}, true, nil
	}
	return r.CheckAsOf(ctx, caller, id, r.now())
}

// CheckAsOf is Check for something that happened at asOf (an event handled later): a cached scope
// read at or after asOf may answer no, one read before it is asked for again first.
func (r *Resolver) CheckAsOf(ctx context.Context, caller web.Caller, id int64, asOf time.Time) (Visible, bool, error) {
	s, fetched, err := r.get(ctx, caller, time.Time{})
	if err != nil || s.Contains(id) || !fetched.Before(asOf) {
		return s, err == nil && s.Contains(id), err
	}
	s, _, err = r.get(ctx, caller, asOf)
	return s, err == nil && s.Contains(id), err
}

// EventResolution and EventSkew make an event's time an instant it certainly preceded: events
// carry their time in whole seconds, from another process's clock.
const (
	EventResolution = time.Second
	EventSkew       = 500 * time.Millisecond
)

// EventAsOf is the asOf for CheckAsOf of an event stamped occurredAt (the API's time format) and
// handed to its consumer at received: the earlier of the stamp plus its resolution and skew, and
// the receipt. A scope read after the receipt reflects every change made before the
// event was published, so one call per caller per received batch is enough, however many of
// its events miss. An unreadable stamp counts as the receipt.
func EventAsOf(occurredAt string, received time.Time) time.Time {
	t, err := time.Parse(web.TimeLayout, occurredAt)
	if err != nil {
		return received
	}
	if at := t.Add(EventResolution + EventSkew); at.Before(received) {
		return at
	}
	return received
}

// get is caller's scope read at or after asOf (zero: any within the TTL; later than now: now), and
// when it was read.
func (r *Resolver) get(ctx context.Context, caller web.Caller, asOf time.Time) (Visible, time.Time, error) {
	if seesAll(caller) {
		return Visible{All: true}, time.Time{}, nil
	}
	key := strconv.FormatInt(caller.UserID, 10) + "/" + caller.AccessGroup
	// No read can be newer than one started now (asOf may be ahead: another clock's margin).
	if now := r.now(); asOf.After(now) {
		asOf = now
	}
	for {
		r.mu.Lock()
		now := r.now()
		if e, ok := r.entries[key]; ok && now.Before(e.fetched.Add(r.ttl)) && !e.fetched.Before(asOf) {
			r.mu.Unlock()
			return e.scope, e.fetched, nil
		}
		f, ok := r.flights[key]
		if !ok {
			f = &flight{started: now, done: make(chan struct{})}
			r.flights[key] = f
			go r.fly(context.WithoutCancel(ctx), key, caller, f, r.gen)
		}
		r.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return Visible{}, time.Time{}, fmt.Errorf("order scope of user %d: %w", caller.UserID, ctx.Err())
		}
		// A call that started before asOf may have missed what the caller needs: wait for it to
		// end (one call at a time per caller bounds the load) and go round for a newer one.
		if !f.started.Before(asOf) {
			return f.scope, f.started, f.err
		}
		if f.err != nil {
			return Visible{}, time.Time{}, f.err
		}
	}
}

// seesAll reports a caller who sees every order without asking: a call without a user (another
// service), and staff.
func seesAll(caller web.Caller) bool {
	return caller.UserID == 0 || access.Group(caller.AccessGroup).SeesEveryOrder()
}

// fly makes flight f's call, shared by everyone waiting on it (one of them hanging up must not
// fail the others: the client's own time-out still bounds it), and stores the answer unless a
// Clear came in between.
func (r *Resolver) fly(ctx context.Context, key string, caller web.Caller, f *flight, gen uint64) {
	f.scope, f.err = r.ask(ctx, caller)
	r.mu.Lock()
	if r.flights[key] == f {
		delete(r.flights, key)
	}
	if f.err == nil && r.gen == gen {
		if len(r.entries) > 10_000 {
			clear(r.entries)
		}
		if e, ok := r.entries[key]; !ok || e.fetched.Before(f.started) {
			r.entries[key] = entry{scope: f.scope, fetched: f.started}
		}
	}
	r.mu.Unlock()
	close(f.done)
}

func (r *Resolver) ask(ctx context.Context, caller web.Caller) (Visible, error) {
	q := url.Values{"userId": {strconv.FormatInt(caller.UserID, 10)}, "accessGroup": {caller.AccessGroup}}
	var s Visible
	if err := r.client.Do(ctx, http.MethodGet, "/internal/order-scope?"+q.Encode(), nil, &s); err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return Visible{}, apperr.Wrap(apperr.Unavailable, err, "the caller's orders cannot be read now, the order service is unavailable")
		}
		return Visible{}, apperr.Wrap(apperr.Internal, err, "order scope of user %d", caller.UserID)
	}
	return s, nil
}

// Clear forgets every cached scope (an order's client or agents changed): calls in flight still
// answer those waiting on them, but what they read is not kept.
func (r *Resolver) Clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	clear(r.entries)
	clear(r.flights)
}
