// Package fanout turns each domain event of the events exchange into the deliveries it owes: one
// per enabled subscription that asked for its type and whose owner may see its object.
package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/db"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
	"ccplatform/services/webhook/internal/delivery"
	"ccplatform/services/webhook/internal/subscription"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// jobFailed is the event of a refused async create.
const jobFailed = "lead.job.failed"

// Queue is the dispatcher's queue on the events exchange.
const Queue = "webhook.events"

// Topology declares Queue bound to the events exchange for the event types a subscription may ask
// for.
func Topology() mq.Topology {
	return mq.Subscription(event.Exchange, Queue, subscription.EventTypes()...)
}

// Scopes tells whether a subscription's owner could see an order when an event happened
// (pkg/visibleorders, from the order service; asOf from visibleorders.EventAsOf).
type Scopes interface {
	CheckAsOf(ctx context.Context, caller web.Caller, orderID int64, asOf time.Time) (visibleorders.Visible, bool, error)
}

// Owners tells whether a subscription's owner is still an active user (internal/owner, from the
// user service).
type Owners interface {
	Active(ctx context.Context, userID int64) (bool, error)
}

// Fanout is the handler of Queue.
type Fanout struct {
	conn   *sqlx.DB
	subs   *subscription.Store
	scopes Scopes
	owners Owners
	now    func() time.Time
	log    *zap.Logger
}

// New fans out into conn's schema, asking scopes who sees what.
func New(conn *sqlx.DB, scopes Scopes, now func() time.Time, log *zap.Logger) *Fanout {
	return &Fanout{conn: conn, subs: subscription.NewStore(conn), scopes: scopes, now: now, log: log}
}

// CheckingOwners makes f skip the subscriptions of owners that owners says are not active (the
// dispatcher always wires it; without it every owner counts as active).
func (f *Fanout) CheckingOwners(owners Owners) *Fanout {
	f.owners = owners
	return f
}

// Payload is the body of a webhook: the event as integrators receive it.
type Payload struct {
	ID               string          `json:"id"`
	Type             string          `json:"type"`
	CreatedAt        string          `json:"createdAt"`
	Data             json.RawMessage `json:"data"`
	ChangedFields    []string        `json:"changedFields,omitempty"`
	PreviousStatusID *int64          `json:"previousStatusId,omitempty"`
}

// PayloadOf is the webhook body of ev. An event without data (none of the platform's) is sent with
// data null rather than not at all.
func PayloadOf(ev event.Event) ([]byte, error) {
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	b, err := json.Marshal(Payload{ID: ev.ID, Type: ev.Type, CreatedAt: ev.OccurredAt, Data: data,
		ChangedFields: ev.ChangedFields, PreviousStatusID: ev.PreviousStatusID})
	if err != nil {
		return nil, fmt.Errorf("encode payload of %s: %w", ev.ID, err)
	}
	return b, nil
}

// Handle is the mq.BatchHandler of Queue: the batch's events (a message carries one, or a group
// of them) are recorded with their deliveries in one transaction, then acked (the subscriptions of
// each type read once per batch). An undecodable message is dead-lettered, and so are the items of
// a group that are not events (alone, the group's other events recorded); a database or
// order-service fault is retried (the events wait in the queue); an event the database refuses for
// no known reason is tried alone, and fails alone (with its message).
func (f *Fanout) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	out := make([]mq.Result, len(batch))
	received := f.now()
	var items []item
	seen := map[string]bool{} // an event twice in the batch (a redelivered copy) is recorded once
	for i, d := range batch {
		evs, bad, err := event.Expand(d.Type, d.Body)
		if err != nil {
			out[i] = mq.Result{Outcome: mq.DeadLetter, Reason: err.Error()}
			continue
		}
		if len(bad) > 0 {
			out[i] = mq.Result{Outcome: mq.DeadLetter, Reason: fmt.Sprintf("%d items of the group are not events", len(bad)),
				Keep: mq.JoinGroup(bad)}
		}
		for _, ev := range evs {
			if !seen[ev.ID] {
				seen[ev.ID] = true
				items = append(items, item{ev: ev, index: i, asOf: visibleorders.EventAsOf(ev.OccurredAt, received)})
			}
		}
	}
	err := f.record(ctx, items)
	switch {
	case err == nil:
	case db.Transient(err):
		f.log.Warn("webhooks: fan-out failed, retrying", zap.Int("events", len(items)), zap.Error(err))
		for i := range out {
			if out[i].Outcome == mq.Ack || out[i].Keep != nil {
				out[i] = mq.Result{Outcome: mq.Retry, Reason: err.Error()}
			}
		}
	default:
		for _, it := range items {
			if err := f.record(ctx, []item{it}); err != nil {
				out[it.index] = mq.Result{Outcome: outcomeOf(err), Reason: err.Error()}
			}
		}
	}
	return out
}

func outcomeOf(err error) mq.Outcome {
	if db.Transient(err) {
		return mq.Retry
	}
	return mq.Fail
}

// item is a decoded event of a batch and the index of the message that carried it; asOf is when
// the event certainly had happened, for its owners' scopes.
type item struct {
	ev    event.Event
	index int
	asOf  time.Time
}

// record writes items' events and their deliveries in one transaction.
func (f *Fanout) record(ctx context.Context, items []item) error {
	var batch []delivery.Queued
	byType := map[string][]subscription.Subscription{}
	for _, it := range items {
		subs, ok := byType[it.ev.Type]
		if !ok {
			var err error
			if subs, err = f.subs.Matching(ctx, f.conn, it.ev.Type); err != nil {
				return err
			}
			byType[it.ev.Type] = subs
		}
		var to []int64
		for _, s := range subs {
			if !subscription.KeyCovers(s.KeyScopes, it.ev.Type) {
				continue // the key that made it may not read this data
			}
			ok, err := f.sees(ctx, s, it.ev, it.asOf)
			if err != nil {
				return err
			}
			if ok {
				// Asked last, so the user service hears only of owners who would get the event.
				if ok, err = f.active(ctx, s); err != nil {
					return err
				}
			}
			if ok {
				to = append(to, s.ID)
			}
		}
		if len(to) == 0 {
			continue
		}
		payload, err := PayloadOf(it.ev)
		if err != nil {
			return err
		}
		batch = append(batch, delivery.Queued{ID: it.ev.ID, Type: it.ev.Type, Body: payload, To: to})
	}
	if len(batch) == 0 {
		return nil
	}
	return db.InTx(ctx, f.conn, func(tx *sqlx.Tx) error {
		return delivery.EnqueueAll(ctx, tx, batch, f.now())
	})
}

// active reports whether subscription s's owner is still an active user: a deactivated or deleted
// owner's subscriptions stop, as their keys do.
func (f *Fanout) active(ctx context.Context, s subscription.Subscription) (bool, error) {
	if f.owners == nil {
		return true, nil
	}
	ok, err := f.owners.Active(ctx, s.OwnerUserID)
	if err != nil {
		return false, fmt.Errorf("owner of webhook %d: %w", s.ID, err)
	}
	return ok, nil
}

// sees reports whether subscription s gets ev: its order filter lets it through, and its owner
// may see the event's object (staff every order; a client its own orders; a refused job, and an
// event of no order, only the user whose request caused it).
func (f *Fanout) sees(ctx context.Context, s subscription.Subscription, ev event.Event, asOf time.Time) (bool, error) {
	if len(s.OrderIDs) > 0 && !slices.Contains([]int64(s.OrderIDs), ev.OrderID) {
		return false, nil
	}
	if subscription.SeesAll(access.Group(s.OwnerGroup)) {
		return true, nil
	}
	// A refused job is its submitter's: its body may name another client's order.
	if ev.OrderID == 0 || ev.Type == jobFailed {
		return ev.ActorUserID == s.OwnerUserID, nil
	}
	// A scope cached before the event is asked again before it says no (an order created or
	// assigned just before the event): one call per owner per batch at most.
	_, ok, err := f.scopes.CheckAsOf(ctx, web.Caller{UserID: s.OwnerUserID, AccessGroup: s.OwnerGroup}, ev.OrderID, asOf)
	if err != nil {
		return false, fmt.Errorf("orders of webhook %d's owner: %w", s.ID, err)
	}
	return ok, nil
}
