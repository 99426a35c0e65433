// Package worker turns queued lead jobs into leads. One handler call takes a batch of deliveries,
// each carrying one job (job.MessageType): every job is decoded and fully checked (a job that can
// never succeed is recorded as failed), and the leads of the valid ones are written in ONE
// transaction with their job outcomes. The broker acks only after that transaction committed, and
// the lead's job_id is unique, so a redelivered job creates nothing twice.
package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/tracing"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/job"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/leadv1"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// Worker handles batches of lead.jobs deliveries.
type Worker struct {
	conn *sqlx.DB
	svc  *lead.Service
	log  *zap.Logger
	jobs *prometheus.CounterVec
	// txJobs bounds the jobs written by one transaction.
	txJobs int
}

// New is a worker that checks leads through svc and stores them with their job outcomes in
// transactions on conn, at most txJobs per transaction (bounded by what one INSERT can carry).
func New(conn *sqlx.DB, svc *lead.Service, log *zap.Logger, txJobs int) *Worker {
	txJobs = min(max(txJobs, 1), lead.MaxInsertBatch)
	return &Worker{conn: conn, svc: svc, log: log, txJobs: txJobs}
}

// Counting makes w count the jobs it creates and fails in jobs (job.NewStateCounter); it returns w.
// Both states start at 0, so that a fresh worker exports them and rate() sees the first failure.
func (w *Worker) Counting(jobs *prometheus.CounterVec) *Worker {
	w.jobs = jobs
	jobs.WithLabelValues(stateCreated)
	jobs.WithLabelValues(job.StatusFailed)
	return w
}

// stateCreated is the state label of the jobs that created their lead.
const stateCreated = "created"

// item is one delivery on its way through a batch, and what its job comes to.
type item struct {
	msg     job.Message
	pending lead.Pending
	// ready is the lead to store; failed the reason the job can never succeed (its outcome is
	// recorded, and the delivery acked).
	ready  *lead.Lead
	failed string
	// order is, for a failed job, the existing order it named (0: none), for its lead.job.failed.
	order int64
	// result settles the delivery: Ack until something else is decided.
	result mq.Result
	// repeat is the item of the same job earlier in the batch, which settles this one too.
	repeat *item
}

// open reports whether it is still to be checked and written: read, not a repeat, not settled.
func (it *item) open() bool { return it.repeat == nil && it.result.Outcome == mq.Ack }

// Handle is the mq.BatchHandler of lead.jobs.
func (w *Worker) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	items := w.read(batch)
	if err := w.check(ctx, openItems(items)); err != nil {
		w.log.Warn("lead jobs: catalogs unreachable, retrying the batch", zap.Error(err))
		for _, it := range openItems(items) {
			it.result = mq.Result{Outcome: mq.Retry, Reason: "catalogs unreachable"}
		}
		return resultsOf(items)
	}
	store := openItems(items)
	w.nameOrders(ctx, store)
	for len(store) > 0 {
		n := min(len(store), w.txJobs)
		w.commit(ctx, store[:n])
		store = store[n:]
	}
	return resultsOf(items)
}

// read decodes the batch, one item per delivery. A second delivery of a job in the batch is marked
// as a repeat of the first, and settled like it.
func (w *Worker) read(batch []mq.Delivery) []*item {
	items := make([]*item, len(batch))
	first := make(map[string]*item, len(batch))
	for i, d := range batch {
		it := w.decodeDelivery(d)
		if it.open() {
			if f, seen := first[it.msg.JobID]; seen {
				it.repeat = f
			} else {
				first[it.msg.JobID] = it
			}
		}
		items[i] = it
	}
	return items
}

// openItems is the items still to be checked and written, in batch order.
func openItems(items []*item) []*item {
	var out []*item
	for _, it := range items {
		if it.open() {
			out = append(out, it)
		}
	}
	return out
}

// resultsOf is the result of each delivery: a repeat's is that of the job's first delivery.
func resultsOf(items []*item) []mq.Result {
	out := make([]mq.Result, len(items))
	for i, it := range items {
		if it.repeat != nil {
			it = it.repeat
		}
		out[i] = it.result
	}
	return out
}

// check runs the reference checks of the jobs whose body passed, in one round for all, and
// settles each by its answer (prepared). The error is a fault that concerns every job (the
// catalogs are unreachable).
func (w *Worker) check(ctx context.Context, items []*item) error {
	var asked []*item
	var ps []lead.Pending
	for _, it := range items {
		if it.failed == "" {
			asked = append(asked, it)
			ps = append(ps, it.pending)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	prepared, err := w.svc.Prepare(ctx, ps)
	if err != nil {
		return err
	}
	for n, it := range asked {
		it.prepared(prepared[n])
	}
	return nil
}

// prepared records what the reference checks answered for it: a lead to store, a reason the job
// fails for good, or, when the order service is unavailable, a retry (the job is fine, the check
// must wait).
func (it *item) prepared(p lead.Prepared) {
	switch {
	case p.Err == nil:
		l := p.Lead
		it.ready = &l
	case apperr.KindOf(p.Err) == apperr.Invalid:
		it.failed = reason(it.msg, p.Err)
	default:
		it.result = mq.Result{Outcome: mq.Retry, Reason: p.Err.Error()}
	}
}

// nameOrders sets the order of each failed job that names an existing one, so that its event
// reaches whoever may see that order. The order service is asked before any transaction, once per
// order (most answers come from the cache the reference checks just filled).
func (w *Worker) nameOrders(ctx context.Context, items []*item) {
	known := map[int64]int64{}
	for _, it := range items {
		if it.failed == "" {
			continue
		}
		id := namedOrder(it.msg)
		k, asked := known[id]
		if !asked {
			k = w.svc.KnownOrder(ctx, id)
			known[id] = k
		}
		it.order = k
	}
}

// namedOrder is the order id a job's body names, 0 when it names none that can be read: the body
// was refused, so it is read leniently, as far as it goes.
func namedOrder(m job.Message) int64 {
	var in lead.Input
	if m.Version == "v1" {
		var v1 leadv1.Input
		_ = json.Unmarshal(m.Body, &v1)
		in = v1.V2()
	} else {
		_ = json.Unmarshal(m.Body, &in)
	}
	return in.OrderID.Or(0)
}

// decodeDelivery reads the job a delivery carries. A message of another type than a job's (an
// untyped one is read as a job) is dead-lettered unread: lead.create.group, the JSON array of jobs
// that earlier versions of lead-api published, is no longer read.
func (w *Worker) decodeDelivery(d mq.Delivery) *item {
	if d.Type != job.MessageType && d.Type != "" {
		return unreadable("unknown message type %q", d.Type)
	}
	return w.decode(d.Body)
}

// unreadable is an item whose delivery is dead-lettered at once, for the reason format says.
func unreadable(format string, args ...any) *item {
	return &item{result: mq.Result{Outcome: mq.DeadLetter, Reason: fmt.Sprintf(format, args...)}}
}

// decode reads one job into an item: dead-lettered if the job can never be read, failed if its
// body can never make a lead, else pending its reference checks.
func (w *Worker) decode(raw []byte) *item {
	var m job.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return unreadable("undecodable job: %v", err)
	}
	id, err := job.Parse(m.JobID)
	if err != nil {
		return unreadable("job without a valid jobId: %v", err)
	}
	m.JobID = id.String()
	it := &item{msg: m}
	var ch lead.Changes
	switch m.Version {
	case "v2":
		var in lead.Input
		if err = web.Unmarshal(m.Body, &in); err == nil {
			ch, err = w.svc.CheckBody(in, lead.ForCreate)
		}
	case "v1":
		ch, err = leadv1.Decode(w.svc, m.Body)
	default:
		return unreadable("job %s: unknown version %q", m.JobID, m.Version)
	}
	if err != nil {
		it.failed = reason(m, err)
		return it
	}
	method := m.CreateMethod
	if !slices.Contains([]string{lead.MethodAPIv1Async, lead.MethodAPIv2Async}, method) {
		method = map[string]string{"v1": lead.MethodAPIv1Async, "v2": lead.MethodAPIv2Async}[m.Version]
	}
	jobID := m.JobID
	it.pending = lead.Pending{Changes: ch, Meta: lead.Meta{CreateMethod: method, IP: m.IP, CreatedBy: m.CallerUserID, JobID: &jobID}}
	return it
}

// reason is the text a failed job reports, with the field names of the job's version.
func reason(m job.Message, err error) string {
	if m.Version == "v1" {
		err = lead.RenameFields(err, leadv1.Names)
	}
	if e, ok := apperr.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// commit writes the outcomes of items and settles them: in one transaction, or job by job when
// the database refuses the batch (db.WriteSplitting), so one bad job cannot hold the others back.
func (w *Worker) commit(ctx context.Context, items []*item) {
	errs := db.WriteSplitting(len(items), func(part []int) error {
		sub := make([]*item, len(part))
		for n, p := range part {
			sub[n] = items[p]
		}
		return w.commitTx(ctx, sub)
	}, func(err error) {
		w.log.Warn("lead jobs: batch refused, writing each job alone", zap.Int("jobs", len(items)), zap.Error(err))
	})
	var transient error
	for n, err := range errs {
		it := items[n]
		it.result = written(err)
		switch it.result.Outcome {
		case mq.Retry:
			transient = err
		case mq.Fail:
			m := it.msg
			fields := append([]zap.Field{zap.String("job_id", m.JobID), zap.String("request_id", m.RequestID), zap.Error(err)},
				tracing.LogFields(tracing.WithTraceparent(ctx, m.Traceparent))...)
			w.log.Error("lead jobs: job refused by the database", fields...)
		}
	}
	if transient != nil {
		w.log.Warn("lead jobs: transient database fault, retrying", zap.Int("jobs", len(items)), zap.Error(transient))
	}
}

// written is the result of a job whose write ended with err: acked once written, retried after a
// transient fault, failed (redelivered up to MaxAttempts) when the database refused it.
func written(err error) mq.Result {
	switch {
	case err == nil:
		return mq.Result{Outcome: mq.Ack}
	case db.Transient(err):
		return mq.Result{Outcome: mq.Retry, Reason: err.Error()}
	}
	return mq.Result{Outcome: mq.Fail, Reason: err.Error()}
}

// commitTx writes the outcomes of items in one transaction and, once it committed, counts and
// traces them.
func (w *Worker) commitTx(ctx context.Context, items []*item) error {
	start := time.Now()
	var created, failed int
	var outcomes []job.Outcome
	err := db.InTx(ctx, w.conn, func(tx *sqlx.Tx) error {
		var err error
		outcomes, created, failed, err = write(ctx, tx, items)
		return err
	})
	if err != nil {
		return err
	}
	// Counted once committed: a rolled-back try writes nothing and is not counted.
	if w.jobs != nil {
		w.jobs.WithLabelValues(stateCreated).Add(float64(created))
		w.jobs.WithLabelValues(job.StatusFailed).Add(float64(failed))
	}
	w.traceOutcomes(ctx, start, items, outcomes)
	return nil
}

// traceOutcomes ends, for each job whose outcome a transaction committed, a span continuing the
// trace of the request that queued it (from start, when the transaction began), and writes its
// debug line naming that trace.
func (w *Worker) traceOutcomes(ctx context.Context, start time.Time, items []*item, outcomes []job.Outcome) {
	debug := w.log.Core().Enabled(zap.DebugLevel)
	if !debug && !tracing.Exporting() {
		return
	}
	byJob := make(map[string]job.Message, len(items))
	for _, it := range items {
		byJob[it.msg.JobID] = it.msg
	}
	tracer := tracing.Tracer()
	for _, o := range outcomes {
		m := byJob[o.JobID]
		jctx, span := tracer.Start(tracing.WithTraceparent(ctx, m.Traceparent), "lead job "+o.Status,
			trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(start))
		span.End()
		if debug {
			fields := append([]zap.Field{zap.String("job_id", o.JobID), zap.String("status", o.Status),
				zap.Int64p("lead_id", o.LeadID), zap.String("request_id", m.RequestID)}, tracing.LogFields(jctx)...)
			w.log.Debug("lead jobs: job done", fields...)
		}
	}
}

// write stores, inside tx, the leads of the jobs that have no outcome yet (with their lead.created
// events), every outcome and the lead.job.failed events of the failed ones, and returns those
// outcomes and how many jobs it created leads for and how many it failed.
func write(ctx context.Context, tx *sqlx.Tx, items []*item) (outcomes []job.Outcome, created, failed int, err error) {
	ids := make([]string, len(items))
	for n, it := range items {
		ids[n] = it.msg.JobID
	}
	finished, err := job.Finished(ctx, tx, ids)
	if err != nil {
		return nil, 0, 0, err
	}
	var leads []lead.Lead
	var refused []*item
	for _, it := range items {
		switch {
		case finished[it.msg.JobID]:
			// Done before this delivery (a redelivery after a lost ack): nothing to write.
		case it.ready != nil:
			leads = append(leads, *it.ready)
		default:
			r := it.failed
			outcomes = append(outcomes, job.Outcome{JobID: it.msg.JobID, Status: job.StatusFailed, Reason: &r})
			refused = append(refused, it)
		}
	}
	stored, err := lead.InsertBatch(ctx, tx, leads)
	if err != nil {
		return nil, 0, 0, err
	}
	failed = len(outcomes)
	for _, l := range stored {
		id := l.ID
		outcomes = append(outcomes, job.Outcome{JobID: *l.JobID, Status: job.StatusDone, LeadID: &id})
	}
	written, err := job.RecordOutcomes(ctx, tx, outcomes)
	if err != nil {
		return nil, 0, 0, err
	}
	return outcomes, len(stored), failed, announceFailures(ctx, tx, refused, outcomes[:failed], written)
}

// announceFailures records lead.job.failed inside tx for each refused job (outcomes[n] is the
// outcome of refused[n]) whose outcome this transaction wrote, in one statement.
func announceFailures(ctx context.Context, tx *sqlx.Tx, refused []*item, outcomes []job.Outcome, written map[string]bool) error {
	var evs []event.Event
	for n, it := range refused {
		if !written[it.msg.JobID] {
			continue
		}
		ev, err := job.FailedEvent(outcomes[n], it.order, it.msg.CallerUserID)
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		return nil
	}
	if err := lead.Emit(ctx, tx, evs, nil); err != nil {
		return fmt.Errorf("record %d %s events: %w", len(evs), job.EventFailed, err)
	}
	return nil
}

// deadLetteredReason is what the status route says of a job that left the queue unprocessed. Why
// it left (the database's refusal, in the database's words) is for operators: it goes to the log
// with the job and request ids, and stays on the dead-lettered copy.
const deadLetteredReason = "not processed: the service could not store it; the reason is in the service log under this job id"

// DeadLettered is the mq.ConsumerConfig.OnDeadLetter of lead.jobs: the job the dead-lettered copy
// carries, if it has no outcome yet, is recorded as failed, so its status route reports `failed`,
// never `queued`, once it left the queue. A job too broken to name its id cannot be reported by
// anyone.
func (w *Worker) DeadLettered(ctx context.Context, _ mq.Delivery, body []byte, why string) error {
	var m job.Message
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	id, err := job.Parse(m.JobID)
	if err != nil {
		return nil
	}
	w.log.Warn("lead jobs: job dead-lettered, recorded as failed", zap.String("job_id", id.String()),
		zap.String("request_id", m.RequestID), zap.String("reason", why))
	r := deadLetteredReason
	outcome := job.Outcome{JobID: id.String(), Status: job.StatusFailed, Reason: &r}
	return db.InTx(ctx, w.conn, func(tx *sqlx.Tx) error {
		_, err := job.RecordOutcomes(ctx, tx, []job.Outcome{outcome})
		return err
	})
}
