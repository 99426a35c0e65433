package asynccreate

// The consume side: the Worker turns queued lead jobs into leads. One handler call takes a batch of
// deliveries, each carrying one job (MessageType): every job is decoded and fully checked (a job
// that can never succeed is recorded as failed), and the leads of the valid ones are written in ONE
// transaction with their job outcomes. The broker acks only after that transaction committed, and
// the lead's job_id is unique, so a redelivered job creates nothing twice.

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
	pipe *mq.Pipeline[*item]
}

// NewWorker is a worker that checks leads through svc and stores them with their job outcomes in
// transactions on conn, at most txJobs per transaction (bounded by what one INSERT can carry).
func NewWorker(conn *sqlx.DB, svc *lead.Service, log *zap.Logger, txJobs int) *Worker {
	w := &Worker{conn: conn, svc: svc, log: log}
	w.pipe = &mq.Pipeline[*item]{
		Name:   "lead jobs",
		Log:    log,
		Decode: w.decodeDelivery,
		// A second delivery of a job in the batch settles as the first.
		Key:      func(it *item) string { return it.msg.JobID },
		Check:    w.check,
		Write:    w.commitTx,
		MaxWrite: min(max(txJobs, 1), lead.MaxInsertBatch),
	}
	return w
}

// Counting makes w count the jobs it creates and fails in jobs (NewStateCounter); it returns w.
// Both states start at 0, so that a fresh worker exports them and rate() sees the first failure.
func (w *Worker) Counting(jobs *prometheus.CounterVec) *Worker {
	w.jobs = jobs
	jobs.WithLabelValues(stateCreated)
	jobs.WithLabelValues(StatusFailed)
	return w
}

// stateCreated is the state label of the jobs that created their lead.
const stateCreated = "created"

// item is one job on its way through a batch, and what it comes to.
type item struct {
	msg     Message
	pending lead.Pending
	// ready is the lead to store; failed the reason the job can never succeed (its outcome is
	// recorded, and the delivery acked).
	ready  *lead.Lead
	failed string
	// order is, for a failed job, the existing order it named (0: none), for its lead.job.failed.
	order int64
}

// Handle is the mq.BatchHandler of lead.jobs (mq.Pipeline).
func (w *Worker) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	return w.pipe.Handle(ctx, batch)
}

// check runs the reference checks of the jobs whose body passed, in one round for all: each gets
// a lead to store, a reason it fails for good, or, when the order service is unavailable, a retry
// (the job is fine, the check must wait). A fault that concerns every job (the catalogs are
// unreachable) retries them all. The failed jobs then learn the order they named.
func (w *Worker) check(ctx context.Context, items []*item) []error {
	var asked []int
	var ps []lead.Pending
	for i, it := range items {
		if it.failed == "" {
			asked = append(asked, i)
			ps = append(ps, it.pending)
		}
	}
	errs := make([]error, len(items))
	if len(ps) > 0 {
		prepared, err := w.svc.Prepare(ctx, ps)
		if err != nil {
			return mq.AllFailed(len(items), fmt.Errorf("catalogs unreachable: %w", err))
		}
		for n, i := range asked {
			errs[i] = items[i].prepared(prepared[n])
		}
	}
	w.nameOrders(ctx, items)
	return errs
}

// prepared records what the reference checks answered for it; the error is a fault to retry.
func (it *item) prepared(p lead.Prepared) error {
	switch {
	case p.Err == nil:
		l := p.Lead
		it.ready = &l
	case apperr.KindOf(p.Err) == apperr.Invalid:
		it.failed = reason(it.msg, p.Err)
	default:
		return p.Err
	}
	return nil
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
func namedOrder(m Message) int64 {
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
func (w *Worker) decodeDelivery(d mq.Delivery) ([]*item, error) {
	if d.Type != MessageType && d.Type != "" {
		return nil, fmt.Errorf("unknown message type %q", d.Type)
	}
	it, err := w.decode(d.Body)
	if err != nil {
		return nil, err
	}
	return []*item{it}, nil
}

// decode reads one job into an item: an error if the job can never be read (dead-lettered), failed
// if its body can never make a lead, else pending its reference checks.
func (w *Worker) decode(raw []byte) (*item, error) {
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("undecodable job: %w", err)
	}
	id, err := Parse(m.JobID)
	if err != nil {
		return nil, fmt.Errorf("job without a valid jobId: %w", err)
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
		return nil, fmt.Errorf("job %s: unknown version %q", m.JobID, m.Version)
	}
	if err != nil {
		it.failed = reason(m, err)
		return it, nil
	}
	method := m.CreateMethod
	if !slices.Contains([]string{lead.MethodAPIv1Async, lead.MethodAPIv2Async}, method) {
		method = map[string]string{"v1": lead.MethodAPIv1Async, "v2": lead.MethodAPIv2Async}[m.Version]
	}
	jobID := m.JobID
	it.pending = lead.Pending{Changes: ch, Meta: lead.Meta{CreateMethod: method, IP: m.IP, CreatedBy: m.CallerUserID, JobID: &jobID}}
	return it, nil
}

// reason is the text a failed job reports, with the field names of the job's version.
func reason(m Message, err error) string {
	if m.Version == "v1" {
		err = lead.RenameFields(err, leadv1.Names)
	}
	if e, ok := apperr.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// commitTx writes the outcomes of items in one transaction and, once it committed, counts and
// traces them.
func (w *Worker) commitTx(ctx context.Context, items []*item) error {
	start := time.Now()
	var created, failed int
	var outcomes []Outcome
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
		w.jobs.WithLabelValues(StatusFailed).Add(float64(failed))
	}
	w.traceOutcomes(ctx, start, items, outcomes)
	return nil
}

// traceOutcomes ends, for each job whose outcome a transaction committed, a span continuing the
// trace of the request that queued it (from start, when the transaction began), and writes its
// debug line naming that trace.
func (w *Worker) traceOutcomes(ctx context.Context, start time.Time, items []*item, outcomes []Outcome) {
	debug := w.log.Core().Enabled(zap.DebugLevel)
	if !debug && !tracing.Exporting() {
		return
	}
	byJob := make(map[string]Message, len(items))
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
func write(ctx context.Context, tx *sqlx.Tx, items []*item) (outcomes []Outcome, created, failed int, err error) {
	ids := make([]string, len(items))
	for n, it := range items {
		ids[n] = it.msg.JobID
	}
	finished, err := Finished(ctx, tx, ids)
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
			outcomes = append(outcomes, Outcome{JobID: it.msg.JobID, Status: StatusFailed, Reason: &r})
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
		outcomes = append(outcomes, Outcome{JobID: *l.JobID, Status: StatusDone, LeadID: &id})
	}
	written, err := RecordOutcomes(ctx, tx, outcomes)
	if err != nil {
		return nil, 0, 0, err
	}
	return outcomes, len(stored), failed, announceFailures(ctx, tx, refused, outcomes[:failed], written)
}

// announceFailures records lead.job.failed inside tx for each refused job (outcomes[n] is the
// outcome of refused[n]) whose outcome this transaction wrote, in one statement.
func announceFailures(ctx context.Context, tx *sqlx.Tx, refused []*item, outcomes []Outcome, written map[string]bool) error {
	var evs []event.Event
	for n, it := range refused {
		if !written[it.msg.JobID] {
			continue
		}
		ev, err := FailedEvent(outcomes[n], it.order, it.msg.CallerUserID)
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		return nil
	}
	if err := lead.Emit(ctx, tx, evs, nil); err != nil {
		return fmt.Errorf("record %d %s events: %w", len(evs), EventFailed, err)
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
	var m Message
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	id, err := Parse(m.JobID)
	if err != nil {
		return nil
	}
	w.log.Warn("lead jobs: job dead-lettered, recorded as failed", zap.String("job_id", id.String()),
		zap.String("request_id", m.RequestID), zap.String("reason", why))
	r := deadLetteredReason
	outcome := Outcome{JobID: id.String(), Status: StatusFailed, Reason: &r}
	return db.InTx(ctx, w.conn, func(tx *sqlx.Tx) error {
		_, err := RecordOutcomes(ctx, tx, []Outcome{outcome})
		return err
	})
}
