package asynccreate

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/mq"

	"github.com/prometheus/client_golang/prometheus"
)

// Queue is the work queue of asynchronous creates (docs/architecture.md, "Messaging").
const Queue = "lead.jobs"

// MessageType is the AMQP type of a message carrying one job, which is how lead-api publishes.
const MessageType = "lead.create"

// Message is the body of a job on the queue: the body as the caller sent it, with what is needed
// to check and store it later.
type Message struct {
	JobID        string          `json:"jobId"`
	Version      string          `json:"version"` // "v1" or "v2": which field names body uses
	CreateMethod string          `json:"createMethod"`
	Body         json.RawMessage `json:"body"`
	CallerUserID *int64          `json:"callerUserId"`
	// IP is the client address the gateway forwarded, stored with the lead.
	IP *string `json:"ip,omitempty"`
	// RequestID is the accepting request's X-Request-Id, carried in the job itself: it ties the
	// worker's lines, and a dead-lettered job, to the request that queued it.
	RequestID string `json:"requestId,omitempty"`
	// Traceparent is the accepting request's W3C trace context, carried in the job itself: the
	// worker's span and log lines of the job continue that request's trace.
	Traceparent string `json:"traceparent,omitempty"`
}

// AppendJSON appends m to dst as the JSON object json.Marshal makes of it, with Body copied as
// it is (json.Marshal would reflect over m and rewrite Body compacted: ~5% of an accept's CPU).
// Body must be one JSON value; Accept checks it, so that the worker can always read the job.
func (m Message) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"jobId":`...)
	dst = appendString(dst, m.JobID)
	dst = append(dst, `,"version":`...)
	dst = appendString(dst, m.Version)
	dst = append(dst, `,"createMethod":`...)
	dst = appendString(dst, m.CreateMethod)
	dst = append(dst, `,"body":`...)
	if len(m.Body) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, m.Body...)
	}
	dst = append(dst, `,"callerUserId":`...)
	if m.CallerUserID == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, *m.CallerUserID, 10)
	}
	if m.IP != nil {
		dst = append(dst, `,"ip":`...)
		dst = appendString(dst, *m.IP)
	}
	if m.RequestID != "" {
		dst = append(dst, `,"requestId":`...)
		dst = appendString(dst, m.RequestID)
	}
	if m.Traceparent != "" {
		dst = append(dst, `,"traceparent":`...)
		dst = appendString(dst, m.Traceparent)
	}
	return append(dst, '}')
}

// room is the bytes AppendJSON writes for m unless a string needs escapes, or more: the names, the
// job id, the version, the method and the caller take under 200 bytes. Sized by it, the encoding
// does not grow its buffer.
func (m Message) room() int {
	n := len(m.Body) + len(m.RequestID) + len(m.Traceparent) + 200
	if m.IP != nil {
		n += len(*m.IP)
	}
	return n
}

// appendString appends s as a JSON string: plain printable ASCII as it is, anything else through
// encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// DefaultConfirmTimeout is how long an accept waits for the broker's confirm before it answers
// 503: the job may or may not be queued, and the caller retries (with the same Idempotency-Key).
const DefaultConfirmTimeout = 10 * time.Second

// Accepter publishes every job as a message of its own on a publisher shared by all requests: their
// confirms are outstanding at once, and each request waits only for its own.
type Accepter struct {
	pub      *mq.Publisher
	ids      *IDs
	timeout  time.Duration
	accepted prometheus.Counter
}

// Counting makes a count every accepted job in c; it returns a.
func (a *Accepter) Counting(c prometheus.Counter) *Accepter {
	a.accepted = c
	return a
}

// NewAccepter publishes with pub and names jobs with ids.
func NewAccepter(pub *mq.Publisher, ids *IDs, timeout time.Duration) *Accepter {
	if timeout <= 0 {
		timeout = DefaultConfirmTimeout
	}
	return &Accepter{pub: pub, ids: ids, timeout: timeout}
}

// Accepted is the data of an accepted job.
type Accepted struct {
	JobID string `json:"jobId"`
}

// Accept queues m (its JobID is set here) and returns once the broker has confirmed it.
func (a *Accepter) Accept(ctx context.Context, m Message) (Accepted, error) {
	var owner int64
	if m.CallerUserID != nil {
		owner = *m.CallerUserID
	}
	m.JobID = a.ids.New(owner).String()
	if !json.Valid(m.Body) {
		return Accepted{}, apperr.Field("body", "must be a JSON object")
	}
	body := m.AppendJSON(make([]byte, 0, m.room()))
	pctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	if err := a.pub.Publish(pctx, "", Queue, mq.Message{ID: m.JobID, Type: MessageType, Body: body}); err != nil {
		if errors.Is(err, mq.ErrNotConfirmed) || errors.Is(err, context.DeadlineExceeded) {
			return Accepted{}, apperr.Wrap(apperr.Unavailable, err, "the job queue did not confirm the job in time; send the request again")
		}
		return Accepted{}, apperr.Wrap(apperr.Unavailable, err, "the job queue is unavailable")
	}
	if a.accepted != nil {
		a.accepted.Inc()
	}
	return Accepted{JobID: m.JobID}, nil
}
