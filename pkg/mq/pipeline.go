package mq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"ccplatform/pkg/db"

	"go.uber.org/zap"
)

// Pipeline is the one way a consumer of this platform turns deliveries into stored work. A
// service says how to read a delivery (Decode), what to ask before writing (Check) and how to
// write (Write); the pipeline does everything else: it batches, classifies every error with
// db.Transient, splits a batch the database refuses down to the item at fault, and settles each
// delivery (ack, retry with backoff, redeliver up to MaxAttempts, or dead-letter with the reason).
// Its Handle is the BatchHandler given to Conn.Consume.
//
// What each error means, wherever it comes from:
//   - nil: done;
//   - Skip(reason): nothing to write, ever (a recipient deleted since): acked;
//   - Invalid(reason), or a Decode error: the item can never succeed: dead-lettered at once;
//   - an error db.Transient calls transient (the database or a service unreachable): retried
//     after a backoff, for as long as it takes, without counting an attempt;
//   - Bounded(err), and any other error: redelivered, and dead-lettered once MaxAttempts
//     deliveries failed, so that an error that repeats can not hold the queue for good.
//
// The database's refusal of one item written alone is Invalid: it will refuse it again.
type Pipeline[T any] struct {
	// Name names the consumer in logs.
	Name string
	Log  *zap.Logger
	// Decode reads a delivery's items: one, or several for a group message. An error refuses the
	// whole delivery; a *PartlyInvalid error refuses only the raw items it names, the items
	// returned beside it go on.
	Decode func(d Delivery) ([]T, error)
	// Key, when set, names an item's work: an item whose key came earlier in the batch (the same
	// message delivered twice) is neither checked nor written again, and settles as the first.
	Key func(item T) string
	// Check, when set, does the I/O an item needs before its transaction (other services, caches)
	// and returns one error per item. It may fill in the items through the slice it is given: the
	// pipeline keeps what it sets. A fault that concerns all (a catalog unreachable) is the same
	// error for each: AllFailed.
	Check func(ctx context.Context, items []T) []error
	// Write stores items in ONE transaction of its own and reports its error. It may record
	// results on the items (after its commit only): the pipeline keeps what it sets. It must be
	// idempotent, since a retried delivery is written again.
	Write func(ctx context.Context, items []T) error
	// MaxWrite bounds the items one Write gets (0: the whole batch).
	MaxWrite int
	// After, when set, does the work that must follow the commit of the written items (announce
	// them) and returns one error per item; a failed item's delivery is retried, so Write runs
	// again for it and must find it done.
	After func(ctx context.Context, items []T) []error
	// Raw, when set, is an item's own body: a delivery carrying several items dead-letters only
	// the raw bodies of its refused items (JoinGroup), not those done.
	Raw func(item T) ([]byte, error)
	// Timeout bounds each Check, Write and After call, so that a database or service that hangs
	// instead of refusing turns into a retry (DefaultStepTimeout when zero).
	Timeout time.Duration
}

// DefaultStepTimeout bounds one step of a Pipeline when it sets no Timeout.
const DefaultStepTimeout = 30 * time.Second

// Invalid is the error of an item that can never succeed: it is dead-lettered with the reason.
func Invalid(format string, args ...any) error {
	return &invalidError{reason: fmt.Sprintf(format, args...)}
}

// Skip is the error of an item that needs no work, now or later: it is acked unwritten.
func Skip(format string, args ...any) error {
	return &skipError{reason: fmt.Sprintf(format, args...)}
}

// Bounded marks err as a fault that waiting will not mend but a redelivery might (an order whose
// rules cannot be read): the item is redelivered, and dead-lettered once MaxAttempts deliveries
// failed, where db.Transient alone would retry err for as long as it takes.
func Bounded(err error) error {
	return &boundedError{err: err}
}

// AllFailed is n copies of err: Check's answer when a fault concerns every item.
func AllFailed(n int, err error) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// PartlyInvalid is Decode's error for a group message some of whose raw items are not items: those
// are dead-lettered (alone) with Reason, the items decoded beside it go on.
type PartlyInvalid struct {
	Items  [][]byte
	Reason string
}

func (e *PartlyInvalid) Error() string { return e.Reason }

type invalidError struct{ reason string }

func (e *invalidError) Error() string { return e.reason }

type skipError struct{ reason string }

type boundedError struct{ err error }

func (e *boundedError) Error() string { return e.err.Error() }
func (e *boundedError) Unwrap() error { return e.err }

func (e *skipError) Error() string { return e.reason }

// slot is an item on its way through one batch.
type slot[T any] struct {
	item     T
	delivery int
	// twin is the slot of the first item with the same key (-1: none), which settles this one.
	twin int
	err  error
	// written: Write committed it.
	written bool
}

// Handle is the BatchHandler of the pipeline's queue.
func (p *Pipeline[T]) Handle(ctx context.Context, batch []Delivery) []Result {
	results := make([]Result, len(batch))
	bad := make([]*PartlyInvalid, len(batch))
	var slots []slot[T]
	first := map[string]int{}
	for i, d := range batch {
		items, err := p.Decode(d)
		var part *PartlyInvalid
		switch {
		case errors.As(err, &part):
			bad[i] = part
		case err != nil:
			results[i] = Result{Outcome: DeadLetter, Reason: err.Error()}
			continue
		}
		for _, it := range items {
			s := slot[T]{item: it, delivery: i, twin: -1}
			if p.Key != nil {
				k := p.Key(it)
				if f, seen := first[k]; seen {
					s.twin = f
				} else {
					first[k] = len(slots)
				}
			}
			slots = append(slots, s)
		}
	}
	p.check(ctx, slots)
	p.write(ctx, slots)
	p.after(ctx, slots)
	for i := range slots {
		if t := slots[i].twin; t >= 0 {
			slots[i].err = slots[t].err
		}
	}
	p.settle(slots, bad, results)
	return results
}

// open is the indexes of the slots still to be worked on: not a twin, no error yet (and, when
// written is set, written).
func open[T any](slots []slot[T], written bool) []int {
	var out []int
	for i, s := range slots {
		if s.twin < 0 && s.err == nil && s.written == written {
			out = append(out, i)
		}
	}
	return out
}

func (p *Pipeline[T]) step(ctx context.Context) (context.Context, context.CancelFunc) {
	d := p.Timeout
	if d <= 0 {
		d = DefaultStepTimeout
	}
	return context.WithTimeout(ctx, d)
}

// run calls f with the items of the slots idx and keeps what f set on them; f's errors go to the
// slots (a wrong count is the pipeline's own fault: every item fails).
func (p *Pipeline[T]) run(ctx context.Context, slots []slot[T], idx []int, f func(ctx context.Context, items []T) []error) {
	items := make([]T, len(idx))
	for n, i := range idx {
		items[n] = slots[i].item
	}
	sctx, cancel := p.step(ctx)
	errs := f(sctx, items)
	cancel()
	if len(errs) != len(idx) {
		errs = AllFailed(len(idx), fmt.Errorf("%s: %d answers for %d items", p.Name, len(errs), len(idx)))
	}
	for n, i := range idx {
		slots[i].item = items[n]
		slots[i].err = errs[n]
	}
}

func (p *Pipeline[T]) check(ctx context.Context, slots []slot[T]) {
	idx := open(slots, false)
	if p.Check == nil || len(idx) == 0 {
		return
	}
	p.run(ctx, slots, idx, p.Check)
}

// write writes the checked items, MaxWrite at a time, each group in one transaction or, when the
// database refuses the group, item by item (db.WriteSplitting).
func (p *Pipeline[T]) write(ctx context.Context, slots []slot[T]) {
	idx := open(slots, false)
	for len(idx) > 0 {
		n := len(idx)
		if p.MaxWrite > 0 {
			n = min(n, p.MaxWrite)
		}
		part := idx[:n]
		idx = idx[n:]
		errs := db.WriteSplitting(len(part), func(sub []int) error {
			items := make([]T, len(sub))
			for k, s := range sub {
				items[k] = slots[part[s]].item
			}
			sctx, cancel := p.step(ctx)
			defer cancel()
			err := p.Write(sctx, items)
			if err == nil {
				for k, s := range sub {
					slots[part[s]].item = items[k]
				}
			}
			return err
		}, func(err error) {
			p.logger().Warn(p.Name+": batch refused, writing each item alone", zap.Int("items", len(part)), zap.Error(err))
		})
		for k, err := range errs {
			s := &slots[part[k]]
			switch {
			case err == nil:
				s.written = true
			case db.Transient(err):
				s.err = err
			default:
				// Refused alone: refused again however often it is tried.
				p.logger().Error(p.Name+": item refused by the database", zap.Error(err))
				s.err = Invalid("refused by the database: %v", err)
			}
		}
	}
}

func (p *Pipeline[T]) after(ctx context.Context, slots []slot[T]) {
	idx := open(slots, true)
	if p.After == nil || len(idx) == 0 {
		return
	}
	p.run(ctx, slots, idx, p.After)
}

// settle gives each delivery the result of its items: retried if any must be retried (the done
// ones are found done again), else redelivered if any failed, else dead-lettered if any is
// invalid (a delivery of several items keeps only those, when their raw bodies are known), else
// acked. A delivery Decode refused already has its result.
func (p *Pipeline[T]) settle(slots []slot[T], bad []*PartlyInvalid, results []Result) {
	type verdict struct {
		retry, fail, invalid []string
		raw                  [][]byte
		items                int
		rawMissing, decoded  bool
	}
	vs := make([]verdict, len(results))
	for i, b := range bad {
		vs[i].decoded = true
		if b != nil {
			vs[i].invalid = append(vs[i].invalid, b.Reason)
			vs[i].raw = append(vs[i].raw, b.Items...)
			vs[i].items += len(b.Items)
		}
	}
	for i, r := range results {
		if r.Outcome == DeadLetter {
			vs[i].decoded = false
		}
	}
	var transient error
	for _, s := range slots {
		v := &vs[s.delivery]
		v.items++
		var inv *invalidError
		var skip *skipError
		var bounded *boundedError
		switch {
		case s.err == nil, errors.As(s.err, &skip):
		case errors.As(s.err, &bounded):
			v.fail = append(v.fail, s.err.Error())
		case errors.As(s.err, &inv):
			v.invalid = append(v.invalid, inv.reason)
			raw, err := p.rawOf(s.item)
			v.rawMissing = v.rawMissing || err != nil
			v.raw = append(v.raw, raw)
		case db.Transient(s.err):
			transient = s.err
			v.retry = append(v.retry, s.err.Error())
		default:
			v.fail = append(v.fail, s.err.Error())
		}
	}
	if transient != nil {
		p.logger().Warn(p.Name+": transient fault, retrying", zap.Error(transient))
	}
	for i, v := range vs {
		switch {
		case !v.decoded:
		case len(v.retry) > 0:
			results[i] = Result{Outcome: Retry, Reason: joinReasons(v.retry)}
		case len(v.fail) > 0:
			results[i] = Result{Outcome: Fail, Reason: joinReasons(v.fail)}
		case len(v.invalid) > 0:
			r := Result{Outcome: DeadLetter, Reason: joinReasons(v.invalid)}
			if v.items > 1 && !v.rawMissing {
				r.Keep = JoinGroup(v.raw)
			}
			results[i] = r
		default:
			results[i] = Result{Outcome: Ack}
		}
	}
}

func (p *Pipeline[T]) rawOf(item T) ([]byte, error) {
	if p.Raw == nil {
		return nil, errors.New("no raw body")
	}
	return p.Raw(item)
}

// joinReasons is the reasons without repeats in a row.
func joinReasons(rs []string) string {
	var out []string
	for _, r := range rs {
		if len(out) == 0 || out[len(out)-1] != r {
			out = append(out, r)
		}
	}
	return strings.Join(out, "; ")
}

func (p *Pipeline[T]) logger() *zap.Logger {
	if p.Log == nil {
		return zap.NewNop()
	}
	return p.Log
}
