// Package outbox publishes a message if and only if the state change it announces committed: the
// message is written to an outbox table in the caller's own transaction, and a relay publishes the
// committed rows afterwards (with the broker's confirm) and marks them published. Delivery is at
// least once: a relay that dies between the confirm and its own commit publishes the rows again,
// so consumers deduplicate by message id as they do for every message.
package outbox

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/requestid"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the outbox table, to be applied in the schema of each service that publishes
// through it (the table must live beside the state it announces, to share its transactions).
func Migrations() db.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded folder is fixed at build time
	}
	return db.Migrations{Table: "outbox_version", FS: sub}
}

// ErrHeaders refuses a message with headers: the table keeps the request id (taken from the
// context) but no other header, and dropping them silently would surprise the caller.
var ErrHeaders = errors.New("outbox: message headers are not kept; only the request id of the context is")

// Add records msg for publication to exchange with key, inside tx: it is published only once tx
// commits, and never if tx rolls back.
func Add(ctx context.Context, tx *sqlx.Tx, exchange, key string, msg mq.Message) error {
	if len(msg.Headers) > 0 {
		return ErrHeaders
	}
	if msg.ID == "" {
		return errors.New("outbox: message id is empty (consumers deduplicate by it)")
	}
	var reqID *string
	if id := requestid.From(ctx); id != "" {
		reqID = &id
	}
	const q = `INSERT INTO outbox (exchange, routing_key, message_id, type, body, request_id) VALUES ($1, $2, $3, $4, $5, $6)`
	if _, err := tx.ExecContext(ctx, q, exchange, key, msg.ID, msg.Type, msg.Body, reqID); err != nil {
		return fmt.Errorf("outbox: add %s %s: %w", key, msg.ID, err)
	}
	return nil
}

// Keyed is a message and its routing key, for AddAll.
type Keyed struct {
	Key string
	Msg mq.Message
}

// AddAll records msgs for publication to exchange inside tx with one statement, as Add does each:
// a batch of changes (a worker's batch of creates, an import's chunk) pays one round trip.
func AddAll(ctx context.Context, tx *sqlx.Tx, exchange string, msgs []Keyed) error {
	if len(msgs) == 0 {
		return nil
	}
	keys, ids, types := make(pq.StringArray, len(msgs)), make(pq.StringArray, len(msgs)), make(pq.StringArray, len(msgs))
	bodies := make(pq.ByteaArray, len(msgs))
	for i, m := range msgs {
		if len(m.Msg.Headers) > 0 {
			return ErrHeaders
		}
		if m.Msg.ID == "" {
			return errors.New("outbox: message id is empty (consumers deduplicate by it)")
		}
		keys[i], ids[i], types[i], bodies[i] = m.Key, m.Msg.ID, m.Msg.Type, m.Msg.Body
	}
	var reqID *string
	if id := requestid.From(ctx); id != "" {
		reqID = &id
	}
	const q = `
INSERT INTO outbox (exchange, routing_key, message_id, type, body, request_id)
SELECT $1, k, i, t, b, $6 FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[]) AS m(k, i, t, b)`
	if _, err := tx.ExecContext(ctx, q, exchange, keys, ids, types, bodies, reqID); err != nil {
		return fmt.Errorf("outbox: add %d messages: %w", len(msgs), err)
	}
	return nil
}

// Defaults of the Relay's optional fields.
const (
	DefaultInterval       = 250 * time.Millisecond
	DefaultBatchSize      = 100
	DefaultPublishTimeout = 5 * time.Second
	DefaultRetention      = 24 * time.Hour
)

// Relay publishes committed outbox rows. Any number of relays may run on the same table (one per
// replica): each takes its rows with FOR UPDATE SKIP LOCKED, so no row is handed to two relays
// at once. Rows are published in id order within a relay (unless Parallel); across relays only
// roughly.
type Relay struct {
	DB        *sqlx.DB
	Publisher *mq.Publisher
	Log       *zap.Logger
	// Interval is the pause after a scan that found less than a full batch (or failed).
	Interval time.Duration
	// BatchSize bounds the rows one transaction takes.
	BatchSize int
	// PublishTimeout bounds one publish: while the broker is down the relay gives its rows back
	// after it and tries again, instead of holding their locks for the whole outage.
	PublishTimeout time.Duration
	// Retention is how long published rows are kept (for inspection) before they are deleted.
	Retention time.Duration
	// Published counts the rows published (Collector.Published); nil counts nothing.
	Published prometheus.Counter
	// Parallel is how many publishes of one batch await their confirms at once (1 when unset: one
	// after the other, in id order). Above 1 the rows of a batch reach the broker in no set order,
	// for consumers that need none, and a batch costs one confirm's wait instead of one per row:
	// a service that announces every lead of a bulk import needs that rate.
	Parallel int
	// DeletePublished deletes rows once published instead of stamping them for Retention: a
	// table that takes an event per lead would otherwise write every row twice (a stamped row is a
	// new version of the whole row) and keep a day of them.
	DeletePublished bool
	// GroupType, when set, joins the rows of a batch that share an exchange and routing key into
	// one message of this type (mq.JoinGroup of their bodies): the broker stores and delivers one
	// message for many events, for a table that takes an event per lead of a bulk import. Its
	// consumers must split groups (mq.SplitGroup) and dedupe by each item's own id.
	GroupType string
}

// NewRelay is a relay of db's outbox through pub with every setting at its default, counted by a
// Collector registered on reg: the outbox metrics come with the relay that drains the table.
func NewRelay(db *sqlx.DB, pub *mq.Publisher, log *zap.Logger, reg prometheus.Registerer) *Relay {
	backlog := NewCollector(db)
	reg.MustRegister(backlog)
	return &Relay{DB: db, Publisher: pub, Log: log, Published: backlog.Published()}
}

// withDefaults is r with every unset field at its default; r itself is never written, so one
// Relay may be used from several goroutines.
func (r Relay) withDefaults() *Relay {
	if r.Interval <= 0 {
		r.Interval = DefaultInterval
	}
	if r.BatchSize <= 0 {
		r.BatchSize = DefaultBatchSize
	}
	if r.PublishTimeout <= 0 {
		r.PublishTimeout = DefaultPublishTimeout
	}
	if r.Retention <= 0 {
		r.Retention = DefaultRetention
	}
	if r.Log == nil {
		r.Log = zap.NewNop()
	}
	if r.Parallel <= 0 {
		r.Parallel = 1
	}
	return &r
}

// purgeEvery is how often published rows past retention are deleted.
const purgeEvery = time.Hour

// Run relays until ctx is done. Failures (broker or database down) are logged once per outage and
// retried after Interval, for as long as it takes: the rows wait in the table meanwhile.
func (r *Relay) Run(ctx context.Context) {
	r = r.withDefaults()
	failing := false
	nextPurge := time.Now().Add(purgeEvery)
	for ctx.Err() == nil {
		n, err := r.relayOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				r.Log.Warn("outbox: relay failing, retrying until it heals", zap.Error(err))
			}
			failing = true
		case err == nil && failing:
			r.Log.Info("outbox: relay healed")
			failing = false
		}
		if time.Now().After(nextPurge) {
			if _, err := r.Purge(ctx); err != nil && ctx.Err() == nil {
				r.Log.Warn("outbox: purge", zap.Error(err))
			}
			nextPurge = time.Now().Add(purgeEvery)
		}
		if err == nil && n == r.BatchSize {
			continue // more may be waiting
		}
		select {
		case <-ctx.Done():
		case <-time.After(r.Interval):
		}
	}
}

// row is an outbox row still to publish.
type row struct {
	ID         int64   `db:"id"`
	Exchange   string  `db:"exchange"`
	RoutingKey string  `db:"routing_key"`
	MessageID  string  `db:"message_id"`
	Type       string  `db:"type"`
	Body       []byte  `db:"body"`
	RequestID  *string `db:"request_id"`
}

// RelayOnce publishes up to BatchSize unpublished rows, in id order, and marks those the broker
// confirmed; it returns how many it published. A failed publish ends the batch: the rows before
// it are marked, it and the rest stay for the next scan.
func (r *Relay) RelayOnce(ctx context.Context) (int, error) {
	return r.withDefaults().relayOnce(ctx)
}

func (r *Relay) relayOnce(ctx context.Context) (int, error) {
	const (
		take = `
SELECT id, exchange, routing_key, message_id, type, body, request_id FROM outbox
WHERE published_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`
		stamp = `UPDATE outbox SET published_at = now() WHERE id = ANY($1)`
		drop  = `DELETE FROM outbox WHERE id = ANY($1)`
	)
	mark := stamp
	if r.DeletePublished {
		mark = drop
	}
	var published int
	var pubErr error
	// The transaction outlives a cancelled ctx (only the publishes stop): the rows the broker
	// already confirmed are still marked on shutdown, rather than published again by the next relay.
	tctx := context.WithoutCancel(ctx)
	err := db.InTx(tctx, r.DB, func(tx *sqlx.Tx) error {
		var rows []row
		if err := tx.SelectContext(tctx, &rows, take, r.BatchSize); err != nil {
			return fmt.Errorf("outbox: take rows: %w", err)
		}
		var done pq.Int64Array
		done, pubErr = r.publishAll(ctx, r.units(rows))
		if len(done) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(tctx, mark, done); err != nil {
			return fmt.Errorf("outbox: mark %d rows published: %w", len(done), err)
		}
		published = len(done)
		return nil
	})
	if err == nil && published > 0 && r.Published != nil {
		r.Published.Add(float64(published))
	}
	if err != nil {
		// Whatever was confirmed is published again by the next scan: at least once.
		return 0, err
	}
	return published, pubErr
}

// unit is one message to publish and the rows it carries.
type unit struct {
	msg row
	ids []int64
}

// units are the messages of rows: one per row, or with GroupType one per exchange and routing key
// (in the order of their first row). A group's id names its first row's message and its size, so
// the same rows published again carry the same id.
func (r *Relay) units(rows []row) []unit {
	if r.GroupType == "" {
		out := make([]unit, len(rows))
		for i, rw := range rows {
			out[i] = unit{msg: rw, ids: []int64{rw.ID}}
		}
		return out
	}
	var out []unit
	bodies := map[int][][]byte{}
	at := map[[2]string]int{}
	for _, rw := range rows {
		k := [2]string{rw.Exchange, rw.RoutingKey}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, unit{msg: row{Exchange: rw.Exchange, RoutingKey: rw.RoutingKey, MessageID: rw.MessageID,
				Type: r.GroupType, RequestID: rw.RequestID}})
		}
		out[i].ids = append(out[i].ids, rw.ID)
		bodies[i] = append(bodies[i], rw.Body)
	}
	for i := range out {
		out[i].msg.Body = mq.JoinGroup(bodies[i])
		out[i].msg.MessageID += "+" + strconv.Itoa(len(out[i].ids))
	}
	return out
}

// publishAll publishes units, Parallel at a time, and returns the ids of the rows the broker
// confirmed. One after the other, the first failure ends the batch; in parallel, the units in
// flight finish and only the failed ones stay.
func (r *Relay) publishAll(ctx context.Context, units []unit) (pq.Int64Array, error) {
	done := make(pq.Int64Array, 0, len(units))
	if r.Parallel == 1 {
		for _, u := range units {
			if err := r.publish(ctx, u.msg); err != nil {
				return done, err
			}
			done = append(done, u.ids...)
		}
		return done, nil
	}
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, r.Parallel)
	var wg sync.WaitGroup
	for _, u := range units {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := r.publish(ctx, u.msg)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				first = cmp.Or(first, err)
				return
			}
			done = append(done, u.ids...)
		})
	}
	wg.Wait()
	return done, first
}

func (r *Relay) publish(ctx context.Context, rw row) error {
	if rw.RequestID != nil {
		ctx = requestid.With(ctx, *rw.RequestID)
	}
	pctx, cancel := context.WithTimeout(ctx, r.PublishTimeout)
	defer cancel()
	msg := mq.Message{ID: rw.MessageID, Type: rw.Type, Body: rw.Body}
	if err := r.Publisher.Publish(pctx, rw.Exchange, rw.RoutingKey, msg); err != nil {
		return fmt.Errorf("outbox: publish %s %s: %w", rw.RoutingKey, rw.MessageID, err)
	}
	return nil
}

// Purge deletes rows published more than Retention ago and returns how many.
func (r *Relay) Purge(ctx context.Context) (int64, error) {
	r = r.withDefaults()
	res, err := r.DB.ExecContext(ctx, `DELETE FROM outbox WHERE published_at < now() - $1::interval`,
		fmt.Sprintf("%d milliseconds", r.Retention.Milliseconds()))
	if err != nil {
		return 0, fmt.Errorf("outbox: purge: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
