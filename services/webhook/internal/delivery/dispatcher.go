package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Config tunes a Dispatcher; zero fields take the defaults.
type Config struct {
	// Workers bounds the attempts in flight in this process.
	Workers int
	// PerEndpoint bounds the attempts in flight to one endpoint: a slow or dead endpoint holds at
	// most this many workers, and the others keep theirs.
	PerEndpoint int
	// Poll is the pause after a scan that found nothing due.
	Poll time.Duration
	// ClaimFor is how long a claimed delivery is held (DefaultClaimFor): how long the deliveries
	// of a dispatcher that died wait before another sends them.
	ClaimFor time.Duration
}

// Defaults of Config.
const (
	DefaultWorkers     = 128
	DefaultPerEndpoint = 16
	DefaultPoll        = 100 * time.Millisecond
	// maxClaim bounds one claim, so a process takes no more than it is about to send.
	maxClaim = 100
)

// Notify queues, inside tx, the word to the owner of a subscription the dispatcher disabled.
type Notify func(ctx context.Context, tx *sqlx.Tx, subscriptionID int64) error

// Dispatcher sends due deliveries. Any number may run on one database: each claims its deliveries
// (FOR UPDATE SKIP LOCKED, then held for Config.ClaimFor), so none is sent by two at once; one that dies
// leaves its claims to expire, and they are sent again (at least once).
type Dispatcher struct {
	store   *Store
	sender  *Sender
	notify  Notify
	cfg     Config
	log     *zap.Logger
	now     func() time.Time
	jitter  func() float64
	metrics *Metrics

	mu       sync.Mutex
	inflight map[int64]int // subscription → attempts in flight
	total    int
	wake     chan struct{}
	wg       sync.WaitGroup

	// The results waiting to be recorded, and whether an attempt is recording them (group commit:
	// the first result to arrive writes every one that queued meanwhile in one transaction).
	rmu       sync.Mutex
	queue     []queued
	recording bool
}

// queued is a result waiting for its record, and where to say how it went.
type queued struct {
	r    Result
	done chan error
}

// NewDispatcher sends through sender what store holds; now and jitter are the clock and the
// retries' random draw (time.Now and Jitter in production).
func NewDispatcher(store *Store, sender *Sender, notify Notify, cfg Config, log *zap.Logger, now func() time.Time, jitter func() float64, m *Metrics) *Dispatcher {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = DefaultPerEndpoint
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.ClaimFor < 2*AttemptTimeout {
		cfg.ClaimFor = DefaultClaimFor
	}
	return &Dispatcher{store: store, sender: sender, notify: notify, cfg: cfg, log: log, now: now, jitter: jitter,
		metrics: m, inflight: map[int64]int{}, wake: make(chan struct{}, 1)}
}

// Run sends until ctx is done, then waits for the attempts in flight (each bounded by
// AttemptTimeout) and records them. Database failures are logged and retried after Poll.
func (d *Dispatcher) Run(ctx context.Context) error {
	defer d.wg.Wait()
	for ctx.Err() == nil {
		n, err := d.dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("webhooks: claim failed, retrying", zap.Error(err))
		}
		if n > 0 {
			continue
		}
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-time.After(d.cfg.Poll):
		}
	}
	return nil
}

// dispatch claims what this process has room for and starts each attempt; it returns how many.
func (d *Dispatcher) dispatch(ctx context.Context) (int, error) {
	free, busy := d.room()
	if free == 0 {
		return 0, nil
	}
	due, err := d.store.Claim(ctx, d.now(), d.cfg.ClaimFor, min(free, maxClaim), d.cfg.PerEndpoint, busy)
	if err != nil {
		return 0, err
	}
	var back []int64
	for _, x := range due {
		if !d.take(x.SubscriptionID) {
			back = append(back, x.ID) // the endpoint filled up with an earlier one of this claim
			continue
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.done(x.SubscriptionID)
			d.attempt(context.WithoutCancel(ctx), x)
		}()
	}
	if err := d.store.Release(ctx, back); err != nil {
		d.log.Warn("webhooks: release", zap.Error(err))
	}
	return len(due) - len(back), nil
}

// room is how many more attempts this process may start, and the endpoints at their limit.
func (d *Dispatcher) room() (int, []int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	busy := []int64{}
	for sub, n := range d.inflight {
		if n >= d.cfg.PerEndpoint {
			busy = append(busy, sub)
		}
	}
	return d.cfg.Workers - d.total, busy
}

func (d *Dispatcher) take(sub int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inflight[sub] >= d.cfg.PerEndpoint || d.total >= d.cfg.Workers {
		return false
	}
	d.inflight[sub]++
	d.total++
	d.metrics.inflight(d.total)
	return true
}

func (d *Dispatcher) done(sub int64) {
	d.mu.Lock()
	d.inflight[sub]--
	if d.inflight[sub] == 0 {
		delete(d.inflight, sub)
	}
	d.total--
	d.metrics.inflight(d.total)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// attempt sends x once and records the result. A record that fails leaves the claim to expire:
// the event is sent again then (at least once, which receivers dedupe by Webhook-Id).
func (d *Dispatcher) attempt(ctx context.Context, x Due) {
	at := d.now()
	out := d.sender.Send(ctx, x.URL, x.EventID, x.Secrets(at), x.Body, at)
	r := Result{Due: x, At: at, Outcome: out}
	if out.Cause != nil {
		// The log the owner reads has the stable reason; the cause is for operators.
		d.log.Info("webhooks: attempt failed", zap.Int64("delivery", x.ID), zap.Int64("subscription", x.SubscriptionID),
			zap.String("reason", out.Err), zap.Error(out.Cause))
	}
	if !out.OK() {
		first := at
		if x.FirstAttemptAt != nil {
			first = *x.FirstAttemptAt
		}
		r.Next, _ = NextAttempt(x.Attempts+1, first, d.now(), d.jitter())
	}
	if err := d.record(ctx, r); err != nil {
		d.log.Warn("webhooks: record attempt", zap.Int64("delivery", x.ID), zap.Error(err))
		return
	}
	d.metrics.attempt(r)
}

// record writes r with the other results that queued meanwhile, in one transaction, and returns
// once r is written. A batch the database refuses is written result by result, so one bad result
// fails alone.
func (d *Dispatcher) record(ctx context.Context, r Result) error {
	done := make(chan error, 1)
	d.rmu.Lock()
	d.queue = append(d.queue, queued{r: r, done: done})
	lead := !d.recording
	d.recording = true
	d.rmu.Unlock()
	for lead {
		d.rmu.Lock()
		batch := d.queue
		d.queue = nil
		if len(batch) == 0 {
			d.recording, lead = false, false
		}
		d.rmu.Unlock()
		if len(batch) > 0 {
			d.write(ctx, batch)
		}
	}
	return <-done
}

func (d *Dispatcher) write(ctx context.Context, batch []queued) {
	rs := make([]Result, len(batch))
	for i, q := range batch {
		rs[i] = q.r
	}
	err := d.store.RecordAll(ctx, rs, d.notify)
	if err == nil || len(batch) == 1 {
		for _, q := range batch {
			q.done <- err
		}
		return
	}
	for _, q := range batch {
		q.done <- d.store.RecordAll(ctx, []Result{q.r}, d.notify)
	}
}

// Settle runs dispatch rounds until nothing is due at the clock's now and no attempt is in flight:
// what a test with a fake clock calls after moving the clock.
func (d *Dispatcher) Settle(ctx context.Context) error {
	for {
		n, err := d.dispatch(ctx)
		if err != nil {
			return err
		}
		d.wg.Wait()
		if n == 0 {
			return nil
		}
	}
}

// Metrics counts attempts by outcome and their latency, and the attempts in flight.
type Metrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	inFlight prometheus.Gauge
}

// NewMetrics registers the dispatcher's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_delivery_attempts_total",
			Help: "Webhook delivery attempts by outcome: delivered (2xx), retry (failed, tried again later), failed (retries spent).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "webhook_delivery_attempt_seconds",
			Help:    "Time from the start of a webhook delivery attempt to the endpoint's answer (or the time-out).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "webhook_delivery_attempts_in_flight",
			Help: "Webhook delivery attempts waiting for an endpoint's answer in this process.",
		}),
	}
	reg.MustRegister(m.attempts, m.latency, m.inFlight)
	return m
}

func (m *Metrics) attempt(r Result) {
	if m == nil {
		return
	}
	outcome := "retry"
	switch {
	case r.Outcome.OK():
		outcome = "delivered"
	case r.Next.IsZero():
		outcome = "failed"
	}
	m.attempts.WithLabelValues(outcome).Inc()
	m.latency.Observe(r.Outcome.Latency.Seconds())
}

func (m *Metrics) inflight(n int) {
	if m != nil {
		m.inFlight.Set(float64(n))
	}
}
