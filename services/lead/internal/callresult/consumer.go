package callresult

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
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
	pipe   *mq.Pipeline[Item]
}

// NewConsumer applies events through store with the dialing rules of the orders in dir.
func NewConsumer(store *Store, dir *orders.Directory, log *zap.Logger) *Consumer {
	c := &Consumer{store: store, orders: dir, log: log}
	c.pipe = &mq.Pipeline[Item]{
		Name:    "call results",
		Log:     log,
		Decode:  decode,
		Check:   c.withRules,
		Write:   c.apply,
		Timeout: StoreTimeout,
	}
	return c
}

// Handle is the mq.BatchHandler of lead.call-finished (mq.Pipeline). Per message: undecodable or
// invalid → dead-lettered with the reason; the order service or the database unavailable →
// retried after a backoff; otherwise applied (or recorded as skipped or seen as a duplicate) in
// one transaction for the batch, and acked after its commit.
func (c *Consumer) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	return c.pipe.Handle(ctx, batch)
}

func decode(d mq.Delivery) ([]Item, error) {
	ev, err := Decode(d.Body, time.Now())
	if err != nil {
		return nil, err
	}
	return []Item{{Event: ev}}, nil
}

// withRules gives each event its order's rules, asking for each order once (through the cache
// that order.updated events keep current). An event of an order that does not exist is recorded as
// skipped; an order whose rules cannot be read fails its events (redelivered, then dead-lettered).
func (c *Consumer) withRules(ctx context.Context, items []Item) []error {
	type answer struct {
		rules Rules
		skip  string
		err   error
	}
	byOrder := map[int64]answer{}
	errs := make([]error, len(items))
	for i := range items {
		id := items[i].Event.OrderID
		a, seen := byOrder[id]
		if !seen {
			o, err := c.orders.Get(ctx, id)
			switch {
			case apperr.KindOf(err) == apperr.NotFound:
				a.skip = fmt.Sprintf("order %d does not exist", id)
			case err != nil:
				c.log.Warn("call results: order service unavailable, retrying", zap.Int64("order_id", id), zap.Error(err))
				a.err = err
			default:
				if a.rules, err = RulesOf(o); err != nil {
					c.log.Error("call results: unreadable order rules", zap.Int64("order_id", id), zap.Error(err))
					a.err = mq.Bounded(err)
				}
			}
			byOrder[id] = a
		}
		items[i].Rules, items[i].Skip, errs[i] = a.rules, a.skip, a.err
	}
	return errs
}

// apply applies the events in one transaction.
func (c *Consumer) apply(ctx context.Context, items []Item) error {
	out, err := c.store.Apply(ctx, items)
	if err != nil {
		return err
	}
	for n, r := range out {
		if r.Kind == Skipped {
			c.log.Debug("call results: event skipped", zap.String("event_id", items[n].Event.EventID), zap.String("reason", r.Reason))
		}
	}
	return nil
}
