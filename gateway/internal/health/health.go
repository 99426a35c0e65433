// Package health answers the health check (/v1/health/check/): it probes the gateway itself, every
// deployed service's /readyz, the message broker, the consumers of every queue, and the
// external telephony and voice platforms, all in parallel with a short timeout each, so the answer
// comes in well under a second even when a component hangs or is down.
package health

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Status is one component's entry in the answer.
type Status struct {
	Success bool        `json:"success"`
	Message string      `json:"message"`
	Data    Diagnostics `json:"data"`
}

// Diagnostics are a component's details: how long its probe took, in seconds, a short reason, and
// for the queue hub the consumers of every queue.
type Diagnostics struct {
	ExecutionTime float64       `json:"executionTime"`
	ReasonPhrase  string        `json:"reasonPhrase,omitempty"`
	Consumers     []QueueStatus `json:"consumers,omitempty"`
}

// QueueStatus is one queue of the hub: its consumers now and how many ops expects.
type QueueStatus struct {
	QueueName string      `json:"queue_name"`
	Success   bool        `json:"success"`
	Data      QueueCounts `json:"data"`
}

// QueueCounts are the consumer counts of a queue.
type QueueCounts struct {
	Current int `json:"current_consumers_count"`
	Needle  int `json:"needle_consumers_count"`
}

// Up is a healthy component with its reason.
func Up(reason string) Status {
	return Status{Success: true, Message: "OK", Data: Diagnostics{ReasonPhrase: reason}}
}

// Down is a failed component; message says what is wrong.
func Down(message string) Status { return Status{Message: message} }

// Probe checks one component. Check must return once ctx is done.
type Probe struct {
	Key   string
	Check func(ctx context.Context) Status
}

// Checker runs the probes.
type Checker struct {
	probes  []Probe
	timeout time.Duration
}

// DefaultTimeout bounds each probe.
const DefaultTimeout = 300 * time.Millisecond

// grace is how long past its timeout a probe may take to report before it is cut off; probes
// report their own timeout (with details) inside it.
const grace = 50 * time.Millisecond

// NewChecker runs probes with timeout each (DefaultTimeout when zero).
func NewChecker(timeout time.Duration, probes ...Probe) *Checker {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Checker{probes: probes, timeout: timeout}
}

// Report is the outcome of one check.
type Report struct {
	Components map[string]Status
	// Failed lists the keys of failed components, in probe order.
	Failed []string
}

// Check probes every component in parallel.
func (c *Checker) Check(ctx context.Context) Report {
	results := make([]Status, len(c.probes))
	var wg sync.WaitGroup
	for i, p := range c.probes {
		wg.Go(func() { results[i] = c.run(ctx, p) })
	}
	wg.Wait()
	r := Report{Components: make(map[string]Status, len(c.probes))}
	for i, p := range c.probes {
		r.Components[p.Key] = results[i]
		if !results[i].Success {
			r.Failed = append(r.Failed, p.Key)
		}
	}
	return r
}

func (c *Checker) run(ctx context.Context, p Probe) Status {
	pctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := time.Now()
	done := make(chan Status, 1)
	go func() { done <- p.Check(pctx) }()
	var s Status
	select {
	case s = <-done:
	case <-time.After(c.timeout + grace):
		s = Down(timeoutMessage(c.timeout))
	}
	s.Data.ExecutionTime = time.Since(start).Seconds()
	return s
}

func timeoutMessage(d time.Duration) string { return fmt.Sprintf("no answer within %s", d) }

// Handler answers the health check: 200 when every component is up, else 503 naming the failed
// ones; data is the full component map either way.
func (c *Checker) Handler() gin.HandlerFunc {
	return func(c2 *gin.Context) {
		r := c.Check(c2.Request.Context())
		if len(r.Failed) == 0 {
			c2.JSON(http.StatusOK, web.Envelope{Success: true, Data: r.Components})
			return
		}
		c2.JSON(http.StatusServiceUnavailable, web.Envelope{
			Message: "unavailable: " + strings.Join(r.Failed, ", "),
			Data:    r.Components,
		})
	}
}
