package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"

	"go.uber.org/zap"
)

// StoreTimeout bounds the database work of one batch, so that a database that hangs instead of
// refusing turns into a retry rather than a stuck consumer.
const StoreTimeout = 30 * time.Second

// PublishTimeout bounds how long a batch waits for the broker to confirm its call.finished
// events; past it the batch is retried (the calls stay stored, the events are sent again).
const PublishTimeout = 30 * time.Second

// Consumer handles batches of platform call events.
type Consumer struct {
	store *Store
	pub   *mq.Publisher
	log   *zap.Logger
}

// NewConsumer stores calls in store and announces them through pub.
func NewConsumer(store *Store, pub *mq.Publisher, log *zap.Logger) *Consumer {
	return &Consumer{store: store, pub: pub, log: log}
}

// Handle is the mq.BatchHandler of the telephony.calls queue. Per message: an event that cannot be
// decoded or breaks a rule is dead-lettered with the reason, and so is one the database refuses
// (the batch is then stored event by event, so the others are kept); a transient database or
// broker fault is retried; otherwise the call is stored (once), its call.finished confirmed by the
// broker, and the message acked. Acks therefore come only after the commit and the confirm:
// at-least-once all the way.
func (c *Consumer) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	results := make([]mq.Result, len(batch))
	var valid []int // indexes into batch
	calls := make([]NewCall, len(batch))
	now := time.Now()
	for i, d := range batch {
		ev, err := Decode(d.Body)
		if err == nil {
			calls[i], err = FromEvent(ev, now)
			if err != nil {
				err = fmt.Errorf("invalid event: %w", err)
			}
		}
		if err != nil {
			results[i] = mq.Result{Outcome: mq.DeadLetter, Reason: err.Error()}
			continue
		}
		valid = append(valid, i)
	}
	if len(valid) == 0 {
		return results
	}
	retry := func(reason string, idx []int) {
		for _, i := range idx {
			results[i] = mq.Result{Outcome: mq.Retry, Reason: reason}
		}
	}

	sctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	statuses, err := c.store.Statuses(sctx)
	switch {
	case err != nil && db.Transient(err):
		c.log.Warn("call ingest: database unavailable", zap.Error(err))
		retry(err.Error(), valid)
		return results
	case err != nil:
		// The database refuses the catalog itself (a schema it does not have): no event can be
		// stored until someone fixes it, and retrying without limit would hide that behind a
		// queue that only grows. Each message is tried MaxAttempts times, then dead-lettered.
		c.log.Error("call ingest: call-status catalog refused by the database", zap.Error(err))
		for _, i := range valid {
			results[i] = mq.Result{Outcome: mq.Fail, Reason: err.Error()}
		}
		return results
	}
	var resolved []Resolved
	var stored []int
	for _, i := range valid {
		id, ok := statuses[calls[i].StatusCode]
		if !ok {
			results[i] = mq.Result{Outcome: mq.DeadLetter, Reason: fmt.Sprintf("invalid event: statusCode: unknown call status %q", calls[i].StatusCode)}
			continue
		}
		resolved = append(resolved, Resolved{NewCall: calls[i], StatusID: id})
		stored = append(stored, i)
	}
	if len(resolved) == 0 {
		return results
	}
	pending := c.save(ctx, resolved, stored, results)
	stored = slices.DeleteFunc(stored, func(i int) bool { return results[i].Outcome != mq.Ack })
	if len(stored) == 0 {
		return results
	}

	failed := c.publish(ctx, pending)
	for _, i := range stored {
		if reason, ok := failed[calls[i].PlatformCallID]; ok {
			results[i] = mq.Result{Outcome: mq.Retry, Reason: reason}
		} else {
			results[i] = mq.Result{Outcome: mq.Ack}
		}
	}
	return results
}

// save stores resolved (the deliveries batch[stored[n]]) in one transaction, or call by call when
// the database refuses the batch (db.WriteSplitting): a call it refuses alone is dead-lettered with
// the reason, a transient fault retries the calls it stopped, so that neither holds back the calls
// that can be stored. It sets the result of every call (Ack once stored) and returns the stored
// calls whose call.finished is still unconfirmed.
func (c *Consumer) save(ctx context.Context, resolved []Resolved, stored []int, results []mq.Result) []Pending {
	var pending []Pending
	errs := db.WriteSplitting(len(resolved), func(part []int) error {
		sub := make([]Resolved, len(part))
		for n, p := range part {
			sub[n] = resolved[p]
		}
		sctx, cancel := context.WithTimeout(ctx, StoreTimeout)
		defer cancel()
		out, err := c.store.Save(sctx, sub)
		if err != nil {
			return err
		}
		pending = append(pending, out...)
		return nil
	}, func(err error) {
		c.log.Warn("call ingest: batch refused, storing each call alone", zap.Int("calls", len(resolved)), zap.Error(err))
	})
	for n, err := range errs {
		i := stored[n]
		switch {
		case err == nil:
			results[i] = mq.Result{Outcome: mq.Ack}
		case db.Transient(err):
			c.log.Warn("call ingest: database unavailable", zap.Error(err))
			results[i] = mq.Result{Outcome: mq.Retry, Reason: err.Error()}
		default:
			c.log.Error("call ingest: call refused by the database", zap.String("event_id", resolved[n].EventID), zap.Error(err))
			results[i] = mq.Result{Outcome: mq.DeadLetter, Reason: "refused by the database: " + err.Error()}
		}
	}
	return pending
}

// publish sends every pending call.finished at once (their confirms outstanding together) and
// records the confirmed ones. It returns the platform call ids whose event was not confirmed,
// with the reason; their messages are retried.
func (c *Consumer) publish(ctx context.Context, pending []Pending) map[string]string {
	pctx, cancel := context.WithTimeout(ctx, PublishTimeout)
	defer cancel()
	errs := make([]error, len(pending))
	var wg sync.WaitGroup
	for i, p := range pending {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := FinishedOf(p)
			body, err := json.Marshal(ev)
			if err == nil {
				err = c.pub.Publish(pctx, Exchange, FinishedKey, mq.Message{ID: ev.EventID, Type: FinishedType, Body: body})
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	failed := map[string]string{}
	var confirmed []int64
	for i, p := range pending {
		if errs[i] != nil {
			failed[p.PlatformCallID] = "call.finished not confirmed: " + errs[i].Error()
			continue
		}
		confirmed = append(confirmed, p.ID)
	}
	if len(failed) > 0 {
		c.log.Warn("call ingest: call.finished not confirmed, retrying", zap.Int("calls", len(failed)))
	}
	// The events are out: should this update fail, a later delivery of the same platform event
	// only sends a copy with the same eventId, which consumers drop.
	if err := c.store.MarkPublished(ctx, confirmed); err != nil {
		c.log.Warn("call ingest: could not record published call.finished", zap.Error(err))
	}
	return failed
}
