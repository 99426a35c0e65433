package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/mq"
)

// Queue is the work queue of asynchronous creates (docs/architecture.md, "Messaging").
const Queue = "lead.jobs"

// MessageType is the AMQP type of a job message.
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
}

// DefaultConfirmTimeout is how long an accept waits for the broker's confirm before it answers
// 503: the job may or may not be queued, and the caller retries (with the same Idempotency-Key).
const DefaultConfirmTimeout = 10 * time.Second

// Accepter publishes jobs. It shares one confirm-mode publisher among all requests, so many
// confirms are outstanding at once and each request waits only for its own.
type Accepter struct {
	pub     *mq.Publisher
	ids     *IDs
	timeout time.Duration
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
	m.JobID = a.ids.New().String()
	body, err := json.Marshal(m)
	if err != nil {
		return Accepted{}, fmt.Errorf("encode job: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	if err := a.pub.Publish(pctx, "", Queue, mq.Message{ID: m.JobID, Type: MessageType, Body: body}); err != nil {
		if errors.Is(err, mq.ErrNotConfirmed) || errors.Is(err, context.DeadlineExceeded) {
			return Accepted{}, apperr.Wrap(apperr.Unavailable, err, "the job queue did not confirm the job in time; send the request again")
		}
		return Accepted{}, apperr.Wrap(apperr.Unavailable, err, "the job queue is unavailable")
	}
	return Accepted{JobID: m.JobID}, nil
}
