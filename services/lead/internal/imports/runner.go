package imports

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/lead"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Runner turns the pending rows of imports into leads; lead-worker runs it. Each step claims a
// chunk of one import's pending rows (FOR UPDATE SKIP LOCKED, so any number of workers share an
// import) and, in the same transaction, stores their leads, settles the rows and adds to the
// import's counters: a worker killed mid-chunk leaves the chunk pending for the next one.
type Runner struct {
	conn  *sqlx.DB
	svc   *lead.Service
	log   *zap.Logger
	chunk int
	idle  time.Duration
	rows  *prometheus.CounterVec
}

// NewRunner is a runner writing leads through svc, chunk rows per transaction (bounded by what one
// insert carries), looking for new imports every idle when it has none.
func NewRunner(conn *sqlx.DB, svc *lead.Service, log *zap.Logger, chunk int, idle time.Duration) *Runner {
	chunk = min(max(chunk, 1), lead.MaxInsertBatch)
	if idle <= 0 {
		idle = time.Second
	}
	return &Runner{conn: conn, svc: svc, log: log, chunk: chunk, idle: idle}
}

// Counting makes r count settled rows by outcome in rows (NewRowCounter); it returns r.
func (r *Runner) Counting(rows *prometheus.CounterVec) *Runner {
	r.rows = rows
	rows.WithLabelValues(RowCreated)
	rows.WithLabelValues(RowRefused)
	return r
}

// NewRowCounter is lead_import_rows_total{outcome}, registered on reg.
func NewRowCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lead_import_rows_total",
		Help: "Rows of bulk imports settled by this worker, by outcome (created, refused).",
	}, []string{"outcome"})
	reg.MustRegister(c)
	return c
}

// Run works through open imports until ctx is done. A fault (the database or the order service
// away) is logged and the step tried again after a pause: rows are never given up on for it.
func (r *Runner) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		worked, err := r.Step(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("lead imports: step failed, trying again", zap.Error(err))
			app.Sleep(ctx, r.idle)
		case !worked:
			app.Sleep(ctx, r.idle)
		}
	}
	return nil
}

// Step settles one chunk of the oldest open import that has rows no other worker holds, and
// reports whether it settled any row or finished an import.
func (r *Runner) Step(ctx context.Context) (bool, error) {
	var open []Import
	const q = `SELECT ` + importColumns + ` FROM lead_imports WHERE state IN ('queued', 'running') ORDER BY created_at LIMIT 10`
	if err := r.conn.SelectContext(ctx, &open, q); err != nil {
		return false, fmt.Errorf("find open imports: %w", err)
	}
	var fault error
	for _, imp := range open {
		n, finished, err := r.runChunk(ctx, imp, r.chunk, r.settle)
		if err != nil && !db.Transient(err) {
			// A permanent refusal of the chunk's writes: settle its rows one by one, so that only
			// the row the database refuses is refused.
			r.log.Warn("lead imports: chunk refused, writing its rows one by one", zap.Stringer("import", imp.ID), zap.Error(err))
			return true, r.oneByOne(ctx, imp, r.chunk)
		}
		if err != nil {
			// This import waits (its order's service is away, say); the next ones need not.
			fault = fmt.Errorf("import %s: %w", imp.ID, err)
			continue
		}
		if n > 0 || finished {
			return true, nil
		}
	}
	return false, fault
}

// Refusals that stand for a fault of the database's, whose own words (and their SQLSTATE) go to
// the log with the import and row, never to the caller.
const (
	RuleRefusedByDatabase = "could not be stored: the database refused it; the reason is in the service log under this import and row"
	ErrorImportStopped    = "the import stopped: a row's refusal could not be recorded; the reason is in the service log under this import id"
)

// oneByOne settles up to n pending rows each in its own transaction; a row the database refuses
// even alone is refused with RuleRefusedByDatabase, the database's reason logged.
func (r *Runner) oneByOne(ctx context.Context, imp Import, n int) error {
	for range n {
		claimed, _, err := r.runChunk(ctx, imp, 1, r.settle)
		if err != nil && !db.Transient(err) {
			_, _, err = r.runChunk(ctx, imp, 1, r.refusedByDatabase(err))
			if err != nil && !db.Transient(err) {
				// Not even the refusal can be written: give the import up rather than retry it
				// forever, and say why.
				return r.fail(ctx, imp.ID, err)
			}
		}
		if err != nil || claimed == 0 {
			return err
		}
	}
	return nil
}

// refusedByDatabase refuses the claimed rows for cause, which it logs with each row.
func (r *Runner) refusedByDatabase(cause error) settleFunc {
	refuseAll := refuse(map[string]string{"row": RuleRefusedByDatabase})
	return func(ctx context.Context, tx *sqlx.Tx, imp Import, rows []claimed) ([]outcome, error) {
		for _, row := range rows {
			r.log.Error("lead imports: row refused by the database", zap.Stringer("import", imp.ID), zap.Int("row", row.No), zap.Error(cause))
		}
		return refuseAll(ctx, tx, imp, rows)
	}
}

// fail ends an import as failed, its pending rows left as they are; the import says
// ErrorImportStopped, the log why.
func (r *Runner) fail(ctx context.Context, id uuid.UUID, cause error) error {
	r.log.Error("lead imports: import failed", zap.Stringer("import", id), zap.Error(cause))
	const q = `UPDATE lead_imports SET state = 'failed', error = $2, finished_at = now() WHERE id = $1`
	if _, err := r.conn.ExecContext(ctx, q, id, ErrorImportStopped); err != nil {
		return fmt.Errorf("fail import: %w", err)
	}
	return nil
}

// claimed is a pending row taken by a chunk.
type claimed struct {
	No   int     `db:"row_no"`
	Body *string `db:"body"`
}

// outcome is how a chunk settles one row.
type outcome struct {
	no     int
	status string
	leadID int64
	errors map[string]string
}

func claim(ctx context.Context, tx *sqlx.Tx, id uuid.UUID, limit int) ([]claimed, error) {
	var rows []claimed
	const q = `SELECT row_no, body FROM lead_import_rows WHERE import_id = $1 AND status = 'pending'
ORDER BY row_no LIMIT $2 FOR UPDATE SKIP LOCKED`
	if err := tx.SelectContext(ctx, &rows, q, id, limit); err != nil {
		return nil, fmt.Errorf("claim import rows: %w", err)
	}
	return rows, nil
}

// settleFunc decides the outcomes of the rows a chunk claimed, writing inside tx what they need
// (their leads); an error rolls the whole chunk back.
type settleFunc func(ctx context.Context, tx *sqlx.Tx, imp Import, rows []claimed) ([]outcome, error)

// runChunk claims up to limit pending rows of imp and settles them with settle, in one transaction
// that also records their outcomes and adds them to the import's counters. It returns how many it
// claimed and whether the import is finished (no row left pending).
func (r *Runner) runChunk(ctx context.Context, imp Import, limit int, settle settleFunc) (n int, finished bool, err error) {
	var outs []outcome
	err = db.InTx(ctx, r.conn, func(tx *sqlx.Tx) error {
		rows, err := claim(ctx, tx, imp.ID, limit)
		if err != nil {
			return err
		}
		n = len(rows)
		if n > 0 {
			if outs, err = settle(ctx, tx, imp, rows); err != nil {
				return err
			}
			if err := record(ctx, tx, imp.ID, outs); err != nil {
				return err
			}
		}
		finished, err = finish(ctx, tx, imp.ID)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	r.count(outs)
	return n, finished, nil
}

// refuse refuses every claimed row with errs.
func refuse(errs map[string]string) settleFunc {
	return func(_ context.Context, _ *sqlx.Tx, _ Import, rows []claimed) ([]outcome, error) {
		outs := make([]outcome, len(rows))
		for i, row := range rows {
			outs[i] = outcome{no: row.No, status: RowRefused, errors: errs}
		}
		return outs, nil
	}
}

func (r *Runner) count(outs []outcome) {
	if r.rows == nil {
		return
	}
	for _, o := range outs {
		r.rows.WithLabelValues(o.status).Inc()
	}
}

// settle runs the rows through the rules of a v2 create made by the importing caller and stores
// the leads of the valid ones inside tx. A fault that is no row's mistake (the order service
// unreachable) is returned: the whole chunk waits.
func (r *Runner) settle(ctx context.Context, tx *sqlx.Tx, imp Import, rows []claimed) ([]outcome, error) {
	caller := web.Caller{AccessGroup: imp.AccessGroup}
	if imp.UserID != nil {
		caller.UserID = *imp.UserID
	}
	meta := lead.Meta{CreateMethod: lead.MethodAPIv2Import, IP: imp.IP, CreatedBy: caller.Ref()}
	outs := make([]outcome, len(rows))
	var pending []lead.Pending
	var at []int // index in outs of each pending create
	for i, row := range rows {
		outs[i] = outcome{no: row.No}
		ch, err := r.check(ctx, caller, imp, row)
		if err != nil {
			errs, ok := rowErrors(err)
			if !ok {
				return nil, err
			}
			outs[i].status, outs[i].errors = RowRefused, errs
			continue
		}
		pending = append(pending, lead.Pending{Changes: ch, Meta: meta})
		at = append(at, i)
	}
	if len(pending) == 0 {
		return outs, nil
	}
	prepared, err := r.svc.Prepare(ctx, pending)
	if err != nil {
		return nil, err
	}
	var leads []lead.Lead
	var stored []int
	for n, p := range prepared {
		if p.Err != nil {
			errs, ok := rowErrors(p.Err)
			if !ok {
				return nil, p.Err
			}
			outs[at[n]].status, outs[at[n]].errors = RowRefused, errs
			continue
		}
		leads = append(leads, p.Lead)
		stored = append(stored, at[n])
	}
	made, err := lead.InsertBatch(ctx, tx, leads)
	if err != nil {
		return nil, err
	}
	for n, l := range made {
		outs[stored[n]].status, outs[stored[n]].leadID = RowCreated, l.ID
	}
	return outs, nil
}

// check applies the body rules and the caller's access to one row, with the import's orderId and
// orderCode for a row that names none.
func (r *Runner) check(ctx context.Context, caller web.Caller, imp Import, row claimed) (lead.Changes, error) {
	if row.Body == nil {
		return lead.Changes{}, apperr.Field("row", "could not be read")
	}
	var in lead.Input
	if err := web.Unmarshal([]byte(*row.Body), &in); err != nil {
		return lead.Changes{}, err
	}
	if !in.OrderID.Present() && imp.OrderID != nil {
		in.OrderID = optional.Of(*imp.OrderID)
	}
	if !in.OrderCode.Present() && imp.OrderCode != nil {
		in.OrderCode = optional.Of(*imp.OrderCode)
	}
	ch, err := r.svc.CheckBody(in, lead.ForCreate)
	if err != nil {
		return ch, err
	}
	// The import's orders are those the caller could see when it was accepted: a scope read since
	// then answers every row (a skew's margin, created_at being the database's clock).
	return ch, r.svc.CheckCreateAsOf(ctx, caller, ch, imp.CreatedAt.Add(visibleorders.EventSkew))
}

// rowErrors is a row's refusal in the {field: rule} shape of a create's answer, or false when err
// is a fault rather than the row's mistake.
func rowErrors(err error) (map[string]string, bool) {
	e, ok := apperr.As(err)
	if !ok {
		return nil, false
	}
	switch e.Kind {
	case apperr.Invalid, apperr.Forbidden, apperr.NotFound, apperr.Conflict:
	default:
		return nil, false
	}
	if len(e.Fields) > 0 {
		// A row's errors are an answer like a create's: as bounded.
		fields, more := e.Fields.Bounded()
		if _, ok := fields["row"]; more > 0 && !ok {
			fields["row"] = fmt.Sprintf("and %d more fields", more)
		}
		return fields, true
	}
	return map[string]string{"row": e.Message}, true
}

// record writes the outcomes of a chunk and adds them to the import's counters; the import is
// running from its first chunk on.
func record(ctx context.Context, tx *sqlx.Tx, id uuid.UUID, outs []outcome) error {
	nos := make([]int64, len(outs))
	statuses := make([]string, len(outs))
	leadIDs := make([]int64, len(outs))
	errs := make([]string, len(outs))
	var created int
	for i, o := range outs {
		nos[i], statuses[i], leadIDs[i] = int64(o.no), o.status, o.leadID
		if o.status == RowCreated {
			created++
		}
		if o.errors != nil {
			errs[i] = storableErrors(o.errors)
		}
	}
	const rows = `UPDATE lead_import_rows r SET status = u.status, lead_id = NULLIF(u.lead_id, 0),
    errors = NULLIF(u.errors, '')::jsonb
FROM unnest($2::int[], $3::text[], $4::bigint[], $5::text[]) AS u(row_no, status, lead_id, errors)
WHERE r.import_id = $1 AND r.row_no = u.row_no`
	if _, err := tx.ExecContext(ctx, rows, id, pq.Int64Array(nos), pq.StringArray(statuses), pq.Int64Array(leadIDs),
		pq.StringArray(errs)); err != nil {
		return fmt.Errorf("settle import rows: %w", err)
	}
	const counters = `UPDATE lead_imports SET rows_done = rows_done + $2, rows_created = rows_created + $3,
    rows_refused = rows_refused + $2 - $3, state = 'running', started_at = coalesce(started_at, now())
WHERE id = $1`
	if _, err := tx.ExecContext(ctx, counters, id, len(outs), created); err != nil {
		return fmt.Errorf("count import rows: %w", err)
	}
	return nil
}

// storableErrors is a row's {field: rule} as JSON that jsonb takes: a field named after what the
// row sent may hold U+0000 (a member name of the body), which jsonb refuses (22P05); it is written
// as the six characters of its escape instead.
func storableErrors(errs map[string]string) string {
	clean := make(map[string]string, len(errs))
	for f, rule := range errs {
		clean[strings.ReplaceAll(f, "\x00", `\u0000`)] = strings.ReplaceAll(rule, "\x00", `\u0000`)
	}
	b, _ := json.Marshal(clean) // a map of strings always encodes
	return string(b)
}

// finish marks the import done when no row is left pending, as tx sees them; a chunk another
// worker has not committed yet still counts as pending, and that worker finishes the import.
func finish(ctx context.Context, tx *sqlx.Tx, id uuid.UUID) (bool, error) {
	const q = `UPDATE lead_imports SET state = 'done', finished_at = now(), started_at = coalesce(started_at, now())
WHERE id = $1 AND state IN ('queued', 'running')
    AND NOT EXISTS (SELECT 1 FROM lead_import_rows WHERE import_id = $1 AND status = 'pending')`
	res, err := tx.ExecContext(ctx, q, id)
	if err != nil {
		return false, fmt.Errorf("finish import: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
