package callresult

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/orders"

	"go.uber.org/zap"
)

// StoreTimeout bounds the database work of one batch, so that a database that hangs instead of
// refusing turns into a retry rather than a stuck consumer.
const StoreTimeout = 30 * time.Second

// Consumer handles batches of call.finished deliveries.
type Consumer struct {
	store  *Store
	orders *orders.Directory
	log    *zap.Logger
}

// NewConsumer applies events through store with the dialing rules of the orders in dir.
func NewConsumer(store *Store, dir *orders.Directory, log *zap.Logger) *Consumer {
	return &Consumer{store: store, orders: dir, log: log}
}

// orderRules is what the lookup of one order decided for its events.
type orderRules struct {
	rules Rules
	// skip: the order does not exist; retry: the order service cannot answer now; fail: its
	// answer cannot be read.
	skip, retry, fail string
}

// Handle is the mq.BatchHandler of lead.call-finished. Per message: undecodable or invalid →
// dead-lettered with the reason; the order service or the database unavailable → retried after a
// backoff; otherwise applied (or recorded as skipped or seen as a duplicate) in one transaction
// for the batch, and acked after its commit.
func (c *Consumer) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	results := make([]mq.Result, len(batch))
	var items []Item
	var idx []int
	byOrder := map[int64]orderRules{}
	now := time.Now()
	for i, d := range batch {
		ev, err := Decode(d.Body, now)
		if err != nil {
			results[i] = mq.Result{Outcome: mq.DeadLetter, Reason: err.Error()}
			continue
		}
		r, seen := byOrder[ev.OrderID]
		if !seen {
			r = c.rulesOf(ctx, ev.OrderID)
			byOrder[ev.OrderID] = r
		}
		switch {
		case r.retry != "":
			results[i] = mq.Result{Outcome: mq.Retry, Reason: r.retry}
		case r.fail != "":
			results[i] = mq.Result{Outcome: mq.Fail, Reason: r.fail}
		default:
			items = append(items, Item{Event: ev, Rules: r.rules, Skip: r.skip})
			idx = append(idx, i)
		}
	}
	c.commit(ctx, items, idx, results)
	return results
}

// rulesOf looks the order up (through the cache that order.updated events keep current).
func (c *Consumer) rulesOf(ctx context.Context, orderID int64) orderRules {
	o, err := c.orders.Get(ctx, orderID)
	switch {
	case apperr.KindOf(err) == apperr.NotFound:
		return orderRules{skip: fmt.Sprintf("order %d does not exist", orderID)}
	case err != nil:
		c.log.Warn("call results: order service unavailable, retrying", zap.Int64("order_id", orderID), zap.Error(err))
		return orderRules{retry: err.Error()}
	}
	r, err := RulesOf(o)
	if err != nil {
		c.log.Error("call results: unreadable order rules", zap.Int64("order_id", orderID), zap.Error(err))
		return orderRules{fail: err.Error()}
	}
	return orderRules{rules: r}
}

// commit applies items (the deliveries batch[idx[n]]) and settles them: in one transaction, or
// event by event when the database refuses the batch (db.WriteSplitting), so one event it refuses
// cannot hold the others back. A transient fault retries the events it stopped.
func (c *Consumer) commit(ctx context.Context, items []Item, idx []int, results []mq.Result) {
	errs := db.WriteSplitting(len(items), func(part []int) error {
		sub := make([]Item, len(part))
		for n, p := range part {
			sub[n] = items[p]
		}
		sctx, cancel := context.WithTimeout(ctx, StoreTimeout)
		defer cancel()
		out, err := c.store.Apply(sctx, sub)
		if err != nil {
			return err
		}
		for n, r := range out {
			if r.Kind == Skipped {
				c.log.Debug("call results: event skipped", zap.String("event_id", sub[n].Event.EventID), zap.String("reason", r.Reason))
			}
		}
		return nil
	}, func(err error) {
		c.log.Warn("call results: batch refused, applying each event alone", zap.Int("events", len(items)), zap.Error(err))
	})
	var transient error
	for n, err := range errs {
		i := idx[n]
		switch {
		case err == nil:
			results[i] = mq.Result{Outcome: mq.Ack}
		case db.Transient(err):
			transient = err
			results[i] = mq.Result{Outcome: mq.Retry, Reason: err.Error()}
		default:
			c.log.Error("call results: event refused by the database", zap.String("event_id", items[n].Event.EventID), zap.Error(err))
			results[i] = mq.Result{Outcome: mq.Fail, Reason: err.Error()}
		}
	}
	if transient != nil {
		c.log.Warn("call results: transient database fault, retrying", zap.Int("events", len(items)), zap.Error(transient))
	}
}
