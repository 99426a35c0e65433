package asynccreate

import (
	"context"
	"fmt"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/requestid"
	"ccplatform/pkg/tracing"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/leadv1"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Job states on the status route.
const (
	StatusQueued = "queued"
	StatusDone   = "done"
	StatusFailed = "failed"
)

// Status is the data of the job status route.
type Status struct {
	JobID  string  `json:"jobId"`
	Status string  `json:"status"`
	LeadID *int64  `json:"leadId,omitempty"`
	Reason *string `json:"reason,omitempty"`
}

// Outcome is a job's row in lead_jobs, written by the worker in the transaction that stores the
// lead (done) or after the job was found impossible (failed).
type Outcome struct {
	JobID  string  `db:"job_id"`
	Status string  `db:"status"`
	LeadID *int64  `db:"lead_id"`
	Reason *string `db:"reason"`
}

// Handler serves the async create routes (v2 and v1) and the job status route.
type Handler struct {
	conn   *sqlx.DB
	ids    *IDs
	leads  *lead.Service
	accept *Accepter
}

// NewHandler checks bodies through leads and queues jobs through accept; it reads outcomes from
// conn and verifies job ids with ids.
func NewHandler(conn *sqlx.DB, ids *IDs, leads *lead.Service, accept *Accepter) *Handler {
	return &Handler{conn: conn, ids: ids, leads: leads, accept: accept}
}

// Routes registers the routes on r (which must already require the internal token); idempotent
// guards the creates. v1 jobs are read on the v2 status route too.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/lead/create-async", idempotent, web.Handle(h.create))
	r.POST("/v1/lead/create-async", idempotent, web.Handle(h.createV1))
	r.GET("/v2/lead/job/:jobId", web.Handle(h.status))
}

// create is createLeadAsync: the body's shape is checked now, everything else by the worker. It
// answers {jobId} once the broker confirmed the job; GET /v2/lead/job/:jobId follows it.
func (h *Handler) create(c *gin.Context) (any, error) {
	var in lead.Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := h.leads.CheckBody(in, lead.ForCreate)
	if err != nil {
		return nil, err
	}
	if err := h.leads.CheckCreate(c.Request.Context(), identity.Of(c), ch); err != nil {
		return nil, err
	}
	return h.enqueue(c, "v2", lead.MethodAPIv2Async)
}

// createV1 is createLeadAsyncV1: like createLeadAsync, with the v1 body.
func (h *Handler) createV1(c *gin.Context) (any, error) {
	var in leadv1.Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := leadv1.Check(h.leads, in, lead.ForCreate)
	if err != nil {
		return nil, err
	}
	if err := h.leads.CheckCreate(c.Request.Context(), identity.Of(c), ch); err != nil {
		return nil, lead.RenameFields(err, leadv1.Names)
	}
	return h.enqueue(c, "v1", lead.MethodAPIv1Async)
}

// enqueue queues the request's body as an async create of a version and answers with the job id.
func (h *Handler) enqueue(c *gin.Context, version, method string) (any, error) {
	body, err := web.ReadBody(c)
	if err != nil {
		return nil, err
	}
	meta := lead.MetaOf(c, method)
	ctx := c.Request.Context()
	return h.accept.Accept(ctx, Message{
		Version: version, CreateMethod: method, Body: body, CallerUserID: meta.CreatedBy, IP: meta.IP,
		RequestID: requestid.From(ctx), Traceparent: tracing.Traceparent(ctx),
	})
}

func (h *Handler) status(c *gin.Context) (any, error) {
	id, err := Parse(c.Param("jobId"))
	if err != nil {
		return nil, apperr.Field("jobId", "must be a UUID")
	}
	// Only the user who created the job may follow it: another's job answers like none.
	if !h.ids.Verify(id, identity.Of(c).UserID) {
		return nil, apperr.NotFoundf("job %s does not exist", id)
	}
	const q = `SELECT job_id, status, lead_id, reason FROM lead_jobs WHERE job_id = $1`
	var o Outcome
	err = h.conn.GetContext(c.Request.Context(), &o, q, id.String())
	switch {
	case db.IsNoRows(err):
		// Issued by this service and not finished yet: it waits in the queue (or in a worker).
		return Status{JobID: id.String(), Status: StatusQueued}, nil
	case err != nil:
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	return StatusOf(o), nil
}

// StatusOf is the status route's answer for a job with outcome o.
func StatusOf(o Outcome) Status { return Status(o) }

// RecordOutcomes writes the outcomes of jobs inside tx and returns the ids of the jobs it wrote. A
// job that already has an outcome keeps it (a redelivered job changes nothing, and is not among
// the ids: nothing is to be announced for it).
func RecordOutcomes(ctx context.Context, tx *sqlx.Tx, outcomes []Outcome) (map[string]bool, error) {
	written := map[string]bool{}
	if len(outcomes) == 0 {
		return written, nil
	}
	ids := make([]string, len(outcomes))
	statuses := make([]string, len(outcomes))
	leads := make([]*int64, len(outcomes))
	reasons := make([]*string, len(outcomes))
	for i, o := range outcomes {
		ids[i], statuses[i], leads[i], reasons[i] = o.JobID, o.Status, o.LeadID, o.Reason
	}
	const q = `
INSERT INTO lead_jobs (job_id, status, lead_id, reason)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[])
ON CONFLICT (job_id) DO NOTHING
RETURNING job_id::text`
	var done []string
	if err := tx.SelectContext(ctx, &done, q, pqStrings(ids), pqStrings(statuses), pqNullInts(leads), pqNullStrings(reasons)); err != nil {
		return nil, fmt.Errorf("record job outcomes: %w", err)
	}
	for _, id := range done {
		written[id] = true
	}
	return written, nil
}

// Finished returns which of ids already have an outcome, read inside tx.
func Finished(ctx context.Context, tx *sqlx.Tx, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	var done []string
	if err := tx.SelectContext(ctx, &done, `SELECT job_id::text FROM lead_jobs WHERE job_id = ANY($1::uuid[])`, pqStrings(ids)); err != nil {
		return nil, fmt.Errorf("finished jobs: %w", err)
	}
	for _, id := range done {
		out[id] = true
	}
	return out, nil
}
