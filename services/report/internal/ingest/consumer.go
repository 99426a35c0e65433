package ingest

import (
	"context"
	"fmt"

	"ccplatform/pkg/db"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Consumer is the handler of Queue.
type Consumer struct {
	conn *sqlx.DB
	log  *zap.Logger
}

// NewConsumer adds to the aggregates of conn's schema.
func NewConsumer(conn *sqlx.DB, log *zap.Logger) *Consumer { return &Consumer{conn: conn, log: log} }

// item is a fact and the index of the delivery that carried it.
type item struct {
	fact  Fact
	index int
}

// Decode reads a delivery (one event, or a group of them: event.GroupType) into facts. The items
// that are not countable events come back apart (bad, with the reason of the first), to be
// dead-lettered alone; err is a body that is neither an event nor a group.
func Decode(d mq.Delivery) (facts []Fact, bad [][]byte, reason string, err error) {
	items := [][]byte{d.Body}
	if d.Type == event.GroupType {
		raws, err := mq.SplitGroup(d.Body)
		if err != nil {
			return nil, nil, "", fmt.Errorf("undecodable event group: %w", err)
		}
		items = items[:0]
		for _, r := range raws {
			items = append(items, r)
		}
	}
	for _, it := range items {
		ev, err := event.Decode(it)
		var f Fact
		if err == nil {
			f, err = FactOf(ev, it)
		}
		if err != nil {
			if reason == "" {
				reason = err.Error()
			}
			bad = append(bad, it)
			continue
		}
		facts = append(facts, f)
	}
	if d.Type != event.GroupType && len(bad) > 0 {
		return nil, nil, "", fmt.Errorf("%s", reason)
	}
	return facts, bad, reason, nil
}

// Handle is the mq.BatchHandler of Queue: the batch's facts are written in one transaction, then
// acked. An undecodable message is dead-lettered (and so are the bad items of a group, the others
// counted); a transient fault is retried; a batch the database refuses for another reason is
// written again message by message, so that only the message at fault fails.
func (c *Consumer) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	out := make([]mq.Result, len(batch))
	var items []item
	for i, d := range batch {
		facts, bad, reason, err := Decode(d)
		if err != nil {
			out[i] = mq.Result{Outcome: mq.DeadLetter, Reason: err.Error()}
			continue
		}
		if len(bad) > 0 {
			out[i] = mq.Result{Outcome: mq.DeadLetter, Reason: fmt.Sprintf("%d items of the group are not countable events: %s", len(bad), reason),
				Keep: mq.JoinGroup(bad)}
		}
		for _, f := range facts {
			items = append(items, item{fact: f, index: i})
		}
	}
	err := c.write(ctx, items)
	switch {
	case err == nil:
	case db.Transient(err):
		c.log.Warn("reports: batch failed, retrying", zap.Int("events", len(items)), zap.Error(err))
		for i := range out {
			if out[i].Outcome == mq.Ack || out[i].Keep != nil {
				out[i] = mq.Result{Outcome: mq.Retry, Reason: err.Error()}
			}
		}
	default:
		for i := range batch {
			var mine []item
			for _, it := range items {
				if it.index == i {
					mine = append(mine, it)
				}
			}
			if err := c.write(ctx, mine); err != nil {
				outcome := mq.Fail
				if db.Transient(err) {
					outcome = mq.Retry
				}
				out[i] = mq.Result{Outcome: outcome, Reason: err.Error()}
			}
		}
	}
	return out
}

func (c *Consumer) write(ctx context.Context, items []item) error {
	if len(items) == 0 {
		return nil
	}
	facts := make([]Fact, len(items))
	for i, it := range items {
		facts[i] = it.fact
	}
	return db.InTx(ctx, c.conn, func(tx *sqlx.Tx) error { return Write(ctx, tx, facts) })
}
