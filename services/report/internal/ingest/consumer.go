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

// Consumer is the handler of Queue, on mq.Pipeline.
type Consumer struct {
	conn *sqlx.DB
	pipe *mq.Pipeline[Fact]
}

// NewConsumer adds to the aggregates of conn's schema.
func NewConsumer(conn *sqlx.DB, log *zap.Logger) *Consumer {
	c := &Consumer{conn: conn}
	c.pipe = &mq.Pipeline[Fact]{
		Name:  "reports",
		Log:   log,
		Write: c.write,
		Decode: func(d mq.Delivery) ([]Fact, error) {
			facts, bad, reason, err := Decode(d)
			if err != nil {
				return nil, err
			}
			if len(bad) > 0 {
				return facts, &mq.PartlyInvalid{Items: bad, Reason: fmt.Sprintf("%d items of the group are not countable events: %s", len(bad), reason)}
			}
			return facts, nil
		},
	}
	return c
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
// acked; each fact counts once (its event id is recorded in the same transaction). An undecodable
// message is dead-lettered (and so are the bad items of a group, the others counted); a transient
// fault is retried; a batch the database refuses is written again fact by fact, so that only the
// fact at fault is dead-lettered (mq.Pipeline).
func (c *Consumer) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	return c.pipe.Handle(ctx, batch)
}

func (c *Consumer) write(ctx context.Context, facts []Fact) error {
	return db.InTx(ctx, c.conn, func(tx *sqlx.Tx) error { return Write(ctx, tx, facts) })
}
