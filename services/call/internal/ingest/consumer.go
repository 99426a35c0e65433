package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"ccplatform/pkg/mq"

	"go.uber.org/zap"
)

// StoreTimeout bounds the database work of one batch, so that a database that hangs instead of
// refusing turns into a retry rather than a stuck consumer.
const StoreTimeout = 30 * time.Second

// Consumer handles batches of platform call events.
type Consumer struct {
	store *Store
	pub   *mq.Publisher
	log   *zap.Logger
	pipe  *mq.Pipeline[*item]
}

// item is one call event on its way: the call to store, and once stored, its call.finished if
// the broker has not confirmed it yet.
type item struct {
	call    Resolved
	pending *Pending
}

// NewConsumer stores calls in store and announces them through pub.
func NewConsumer(store *Store, pub *mq.Publisher, log *zap.Logger) *Consumer {
	c := &Consumer{store: store, pub: pub, log: log}
	c.pipe = &mq.Pipeline[*item]{
		Name:    "call ingest",
		Log:     log,
		Decode:  decode,
		Key:     func(it *item) string { return it.call.PlatformCallID },
		Check:   c.resolve,
		Write:   c.save,
		After:   c.publish,
		Timeout: StoreTimeout,
	}
	return c
}

// Handle is the mq.BatchHandler of the telephony.calls queue (mq.Pipeline). Per message: an event
// that cannot be decoded or breaks a rule is dead-lettered with the reason, and so is one the
// database refuses; a transient database or broker fault is retried; otherwise the call is stored
// (once: the same platform call twice is one call), its call.finished confirmed by the broker, and
// the message acked. Acks therefore come only after the commit and the confirm: at-least-once all
// the way.
func (c *Consumer) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	return c.pipe.Handle(ctx, batch)
}

func decode(d mq.Delivery) ([]*item, error) {
	ev, err := Decode(d.Body)
	if err != nil {
		return nil, err
	}
	call, err := FromEvent(ev, time.Now())
	if err != nil {
		return nil, fmt.Errorf("invalid event: %w", err)
	}
	return []*item{{call: Resolved{NewCall: call}}}, nil
}

// resolve gives each call the id of its status in the catalog. A catalog the database refuses (a
// schema it does not have) fails every call: no event can be stored until someone fixes it.
func (c *Consumer) resolve(ctx context.Context, items []*item) []error {
	statuses, err := c.store.Statuses(ctx)
	if err != nil {
		return mq.AllFailed(len(items), err)
	}
	errs := make([]error, len(items))
	for i, it := range items {
		id, ok := statuses[it.call.StatusCode]
		if !ok {
			errs[i] = mq.Invalid("invalid event: statusCode: unknown call status %q", it.call.StatusCode)
			continue
		}
		it.call.StatusID = id
	}
	return errs
}

// save stores the calls in one transaction and notes which of them still owe their call.finished.
func (c *Consumer) save(ctx context.Context, items []*item) error {
	calls := make([]Resolved, len(items))
	for i, it := range items {
		calls[i] = it.call
	}
	pending, err := c.store.Save(ctx, calls)
	if err != nil {
		return err
	}
	byCall := make(map[string]*Pending, len(pending))
	for i := range pending {
		byCall[pending[i].PlatformCallID] = &pending[i]
	}
	for _, it := range items {
		it.pending = byCall[it.call.PlatformCallID]
	}
	return nil
}

// publish sends every pending call.finished at once (their confirms outstanding together) and
// records the confirmed ones; a call whose event was not confirmed is retried.
func (c *Consumer) publish(ctx context.Context, items []*item) []error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		if it.pending == nil {
			continue
		}
		wg.Go(func() {
			ev := FinishedOf(*it.pending)
			body, err := json.Marshal(ev)
			if err == nil {
				err = c.pub.Publish(ctx, Exchange, FinishedKey, mq.Message{ID: ev.EventID, Type: FinishedType, Body: body})
			}
			if err != nil {
				errs[i] = fmt.Errorf("call.finished not confirmed: %w", err)
			}
		})
	}
	wg.Wait()
	var confirmed []int64
	for i, it := range items {
		if it.pending != nil && errs[i] == nil {
			confirmed = append(confirmed, it.pending.ID)
		}
	}
	// The events are out: should this update fail, a later delivery of the same platform event
	// only sends a copy with the same eventId, which consumers drop.
	if err := c.store.MarkPublished(ctx, confirmed); err != nil {
		c.log.Warn("call ingest: could not record published call.finished", zap.Error(err))
	}
	return errs
}
