package mq

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/zap"
)

// Outcome is what a handler decided for one message.
type Outcome int

const (
	// Ack: done (including permanent business failures the handler recorded itself).
	Ack Outcome = iota
	// Retry: a transient fault (the database is down): the same messages are handed again after a
	// backoff, without counting an attempt, for as long as it takes.
	Retry
	// Fail: this message failed unexpectedly; it is redelivered until MaxAttempts, then
	// dead-lettered with the reason.
	Fail
	// DeadLetter: the message can never succeed (undecodable): dead-lettered at once.
	DeadLetter
)

// Result is a handler's decision for one message; Reason is kept with a dead-lettered message.
type Result struct {
	Outcome Outcome
	Reason  string
	// Keep, when set, is the body dead-lettered instead of the delivered one: a group message
	// (JoinGroup) dead-letters only its items that failed, not those already done.
	Keep []byte
}

// Delivery is a received message.
type Delivery = amqp.Delivery

// BatchHandler processes a batch and returns one Result per message, in order.
type BatchHandler func(ctx context.Context, batch []Delivery) []Result

// ConsumerConfig tunes a consumer.
type ConsumerConfig struct {
	Queue string
	// Prefetch bounds unacked messages per channel.
	Prefetch int
	// BatchSize and BatchWait bound how many messages, and how long after the first, one handler
	// call gathers.
	BatchSize int
	BatchWait time.Duration
	// Workers is the number of channels consuming in parallel.
	Workers int
	// MaxAttempts is how many deliveries a Fail-ing message gets before it is dead-lettered.
	MaxAttempts int
	// Tag prefixes the consumer tags shown by the broker.
	Tag string
	// MaxUnackedAge bounds how long a delivery may wait for its outcome, from its arrival to its
	// ack, before the consumer reports itself stalled (DeliveriesFlowing, readiness, the
	// mq_oldest_unacked_seconds metric against mq_max_unacked_age_seconds). Choose it well above the
	// longest normal batch: past it a batch is not slow but stuck (a transient fault that does not
	// pass, a message retried without end). DefaultMaxUnackedAge when zero.
	MaxUnackedAge time.Duration
	// OnDeadLetter, when set, runs before a message is dead-lettered, with the body the copy will
	// carry and the reason: the owner of the work records that it ended (a job as failed), so
	// nothing waits forever on a message that left its queue. An error keeps the message in its
	// queue (redelivered, so the record is tried again) instead of dead-lettering it unrecorded.
	OnDeadLetter func(ctx context.Context, d Delivery, body []byte, reason string) error
}

func (c *ConsumerConfig) defaults() {
	if c.Prefetch <= 0 {
		c.Prefetch = 256
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 100
	}
	if c.BatchWait <= 0 {
		c.BatchWait = 5 * time.Millisecond
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.MaxUnackedAge <= 0 {
		c.MaxUnackedAge = DefaultMaxUnackedAge
	}
}

// DefaultMaxUnackedAge is MaxUnackedAge when unset: the longest normal batch of this platform's
// consumers is bounded by their store and publish timeouts (30 s each), so twice that much again
// means the batch is stuck, not slow.
const DefaultMaxUnackedAge = 2 * time.Minute

// Consume runs cfg.Workers consumers of cfg.Queue until ctx is done, re-opening channels after
// any broker failure. On return every message it was given is acked or back with the broker. The
// error is always nil, since broker failures are retried here and never handed up: it is there so
// that Consume is an app.Tasks task as it stands.
func (c *Conn) Consume(ctx context.Context, cfg ConsumerConfig, h BatchHandler) error {
	cfg.defaults()
	dlq := NewPublisher(c)
	defer dlq.Close()
	sub := c.subs.of(cfg.Queue)
	sub.setBound(cfg.MaxUnackedAge)
	sub.wanted.Add(int64(cfg.Workers))
	defer sub.wanted.Add(-int64(cfg.Workers))
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{conn: c, cfg: cfg, h: h, dlq: dlq, sub: sub, tag: fmt.Sprintf("%s-%d", cfg.Tag, i),
				log: c.log.With(zap.String("queue", cfg.Queue))}
			w.run(ctx)
		}()
	}
	wg.Wait()
	return nil
}

type worker struct {
	conn *Conn
	cfg  ConsumerConfig
	h    BatchHandler
	dlq  *Publisher
	sub  *subscription
	tag  string
	log  *zap.Logger
}

func (w *worker) run(ctx context.Context) {
	bo := newBackoff(100*time.Millisecond, 5*time.Second)
	for ctx.Err() == nil {
		err := w.session(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := bo.NextBackOff()
		w.log.Warn("mq: consumer stopped, restarting", zap.Duration("in", wait), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// session consumes on one channel until it breaks or ctx ends.
func (w *worker) session(ctx context.Context) error {
	ch, err := w.conn.Channel(ctx)
	if err != nil {
		return err
	}
	defer ch.Close()
	if err := ch.Qos(w.cfg.Prefetch, 0, false); err != nil {
		return fmt.Errorf("qos: %w", err)
	}
	deliveries, err := ch.Consume(w.cfg.Queue, w.tag, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume %s: %w", w.cfg.Queue, err)
	}
	w.sub.active.Add(1)
	defer w.sub.active.Add(-1)
	for {
		batch, ok := w.gather(ctx, deliveries)
		if len(batch) > 0 {
			w.process(ctx, batch)
			w.sub.release(w)
		}
		if !ok {
			if ctx.Err() != nil {
				// Graceful stop: the broker requeues whatever was prefetched but not handled.
				_ = ch.Cancel(w.tag, false)
				return nil
			}
			return fmt.Errorf("delivery channel closed")
		}
	}
}

// gather takes one delivery (waiting), then more until BatchSize or BatchWait. ok is false when the
// delivery channel closed or ctx ended.
func (w *worker) gather(ctx context.Context, deliveries <-chan amqp.Delivery) ([]Delivery, bool) {
	var batch []Delivery
	select {
	case d, open := <-deliveries:
		if !open {
			return nil, false
		}
		// Its wait for an outcome starts now; those gathered after it are younger.
		w.sub.hold(w, time.Now())
		batch = append(batch, d)
	case <-ctx.Done():
		return nil, false
	}
	timer := time.NewTimer(w.cfg.BatchWait)
	defer timer.Stop()
	for len(batch) < w.cfg.BatchSize {
		select {
		case d, open := <-deliveries:
			if !open {
				return batch, false
			}
			batch = append(batch, d)
		case <-timer.C:
			return batch, true
		}
	}
	return batch, true
}

// process hands the batch to the handler and settles every message.
func (w *worker) process(ctx context.Context, batch []Delivery) {
	bo := newBackoff(200*time.Millisecond, 10*time.Second)
	pending := w.overdue(ctx, batch)
	for len(pending) > 0 {
		// The handler runs to completion even while stopping: a half-done batch would only be
		// redone after redelivery.
		start := time.Now()
		results := w.h(context.WithoutCancel(ctx), pending)
		w.conn.metrics.observeBatch(w.cfg.Queue, len(pending), time.Since(start))
		if len(results) != len(pending) {
			w.log.Error("mq: handler returned a wrong number of results", zap.Int("want", len(pending)), zap.Int("got", len(results)))
			results = make([]Result, len(pending))
			for i := range results {
				results[i] = Result{Outcome: Fail, Reason: "handler returned no result"}
			}
		}
		if allAcked(results) {
			ackAll(pending, w.log)
			w.conn.metrics.acks.WithLabelValues(w.cfg.Queue).Add(float64(len(pending)))
			return
		}
		var retry []Delivery
		for i, d := range pending {
			w.settle(ctx, d, results[i], &retry)
		}
		pending = retry
		if len(pending) == 0 {
			return
		}
		w.conn.metrics.retries.WithLabelValues(w.cfg.Queue).Add(float64(len(pending)))
		wait := bo.NextBackOff()
		w.log.Warn("mq: transient failure, retrying batch", zap.Int("messages", len(pending)), zap.Duration("in", wait))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			for _, d := range pending {
				_ = d.Nack(false, true)
			}
			return
		}
	}
}

// overdue dead-letters the messages delivered more than MaxAttempts times, which never got an
// outcome (the consumer died while handling them, as a message that crashes it would), and returns
// the others. Without it such a message would reach the broker's own delivery limit, which
// dead-letters it past OnDeadLetter.
func (w *worker) overdue(ctx context.Context, batch []Delivery) []Delivery {
	keep := batch[:0:0]
	for _, d := range batch {
		if n := attempts(d); n > w.cfg.MaxAttempts {
			w.deadLetter(ctx, d, "undelivered", fmt.Sprintf("delivered %d times without an outcome: the consumer stopped while handling it", n), nil)
			continue
		}
		keep = append(keep, d)
	}
	return keep
}

func allAcked(results []Result) bool {
	for _, r := range results {
		if r.Outcome != Ack {
			return false
		}
	}
	return true
}

// ackAll acks a whole batch with one frame: its deliveries came in order on one channel, and
// every earlier delivery of that channel was settled with an earlier batch, so acking "up to the
// last" acks exactly this batch.
func ackAll(batch []Delivery, log *zap.Logger) {
	last := batch[len(batch)-1]
	if err := last.Ack(true); err != nil {
		// The channel died: the messages come back and the handler must see them as done.
		log.Warn("mq: ack failed", zap.Int("messages", len(batch)), zap.String("last_message_id", last.MessageId), zap.Error(err))
	}
}

func (w *worker) settle(ctx context.Context, d Delivery, r Result, retry *[]Delivery) {
	switch r.Outcome {
	case Ack:
		if err := d.Ack(false); err != nil {
			// The channel died: the message comes back and the handler must see it as done.
			w.log.Warn("mq: ack failed", zap.String("message_id", d.MessageId), zap.Error(err))
		}
		w.conn.metrics.acks.WithLabelValues(w.cfg.Queue).Inc()
	case Retry:
		*retry = append(*retry, d)
	case Fail:
		if attempts(d) >= w.cfg.MaxAttempts {
			w.deadLetter(ctx, d, "max_attempts", fmt.Sprintf("failed %d times: %s", attempts(d), r.Reason), r.Keep)
			return
		}
		w.log.Warn("mq: message failed, redelivering", zap.String("message_id", d.MessageId), zap.String("reason", r.Reason))
		w.conn.metrics.retries.WithLabelValues(w.cfg.Queue).Inc()
		_ = d.Nack(false, true)
	case DeadLetter:
		w.deadLetter(ctx, d, "refused", r.Reason, r.Keep)
	}
}

// deadLetter copies d (with body keep, if set) to the dead-letter queue with the reason, and acks
// it only after the broker confirmed the copy. kind is the reason's metric label: refused,
// max_attempts or undelivered.
func (w *worker) deadLetter(ctx context.Context, d Delivery, kind, reason string, keep []byte) {
	headers := amqp.Table{}
	for k, v := range d.Headers {
		headers[k] = v
	}
	headers["x-dead-letter-reason"] = reason
	headers["x-original-queue"] = w.cfg.Queue
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	body := d.Body
	if keep != nil {
		body = keep
	}
	if w.cfg.OnDeadLetter != nil {
		if err := w.cfg.OnDeadLetter(pctx, d, body, reason); err != nil {
			w.log.Error("mq: recording a dead-lettered message failed, requeueing", zap.String("message_id", d.MessageId), zap.Error(err))
			_ = d.Nack(false, true)
			return
		}
	}
	err := w.dlq.Publish(pctx, "", w.cfg.Queue+DeadLetterSuffix, Message{ID: d.MessageId, Type: d.Type, Body: body, Headers: headers})
	if err != nil {
		w.log.Error("mq: dead-letter failed, requeueing", zap.String("message_id", d.MessageId), zap.Error(err))
		_ = d.Nack(false, true)
		return
	}
	w.log.Warn("mq: dead-lettered", zap.String("message_id", d.MessageId), zap.String("reason", reason))
	w.conn.metrics.deadLetters.WithLabelValues(w.cfg.Queue, kind).Inc()
	_ = d.Ack(false)
}

// attempts is how many times d has been delivered, this time included.
func attempts(d Delivery) int {
	// Quorum queues count redeliveries in x-delivery-count.
	switch v := d.Headers["x-delivery-count"].(type) {
	case int64:
		return int(v) + 1
	case int32:
		return int(v) + 1
	case int:
		return v + 1
	case string:
		n, _ := strconv.Atoi(v)
		return n + 1
	}
	if d.Redelivered {
		return 2
	}
	return 1
}
