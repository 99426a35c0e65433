package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Sender sends one delivery on its channel. An error means "not sent": retried later unless it is
// Permanent.
type Sender interface {
	Send(ctx context.Context, d Delivery) error
}

// LoopConfig tunes the delivery loop.
type LoopConfig struct {
	Retry RetryPolicy
	// Poll is how often each channel looks for due deliveries besides being kicked.
	Poll time.Duration
	// Lease is how long a claimed delivery is left alone before another try may take it.
	Lease time.Duration
	// SendTimeout bounds one send.
	SendTimeout time.Duration
	// Batch is how many deliveries one claim takes, Concurrency how many are sent at once per
	// channel.
	Batch       int
	Concurrency int
	// Outcomes counts every attempt by channel and outcome (sent, retried, failed); nil counts
	// nothing. NewOutcomeCounter makes it.
	Outcomes *prometheus.CounterVec
}

// outcomes are the outcome label values of notification_deliveries_total.
var outcomes = []string{"sent", "retried", "failed"}

// NewOutcomeCounter registers notification_deliveries_total.
func NewOutcomeCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notification_deliveries_total",
		Help: "Delivery attempts by channel (live, email, messenger) and outcome (sent, retried, failed: given up).",
	}, []string{"channel", "outcome"})
	reg.MustRegister(c)
	return c
}

func (c *LoopConfig) defaults() {
	if c.Retry.MaxAttempts <= 0 {
		c.Retry = DefaultRetryPolicy
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.SendTimeout <= 0 {
		c.SendTimeout = 30 * time.Second
	}
	if c.Lease <= c.SendTimeout {
		c.Lease = 2 * c.SendTimeout
	}
	if c.Batch <= 0 {
		c.Batch = 100
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
}

// Loop sends due deliveries: one goroutine per configured channel, so a slow or failing channel
// only ever delays itself.
type Loop struct {
	store   *Store
	senders map[Channel]Sender
	cfg     LoopConfig
	kicks   map[Channel]chan struct{}
	log     *zap.Logger
}

// NewLoop sends the channels in senders; deliveries of other channels are never planned.
func NewLoop(store *Store, senders map[Channel]Sender, cfg LoopConfig, log *zap.Logger) *Loop {
	cfg.defaults()
	kicks := make(map[Channel]chan struct{}, len(senders))
	for ch := range senders {
		kicks[ch] = make(chan struct{}, 1)
		// Every outcome of a channel this loop sends starts at 0, so that a fresh worker exports
		// the metric and rate() sees the first failure.
		if cfg.Outcomes != nil {
			for _, o := range outcomes {
				cfg.Outcomes.WithLabelValues(string(ch), o)
			}
		}
	}
	return &Loop{store: store, senders: senders, cfg: cfg, kicks: kicks, log: log}
}

// Configured reports whether ch has a sender.
func (l *Loop) Configured(ch Channel) bool {
	_, ok := l.senders[ch]
	return ok
}

// Kick makes every channel look for due deliveries now rather than at its next poll: new
// notifications go out at once.
func (l *Loop) Kick() {
	for _, k := range l.kicks {
		select {
		case k <- struct{}{}:
		default:
		}
	}
}

// Run sends until ctx is done, then waits for the sends in flight to be recorded.
func (l *Loop) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for ch, s := range l.senders {
		wg.Go(func() { l.channel(ctx, ch, s) })
	}
	wg.Wait()
}

func (l *Loop) channel(ctx context.Context, ch Channel, s Sender) {
	tick := time.NewTicker(l.cfg.Poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		n, err := l.drain(ctx, ch, s)
		if err != nil && ctx.Err() == nil {
			l.log.Warn("delivery: claim failed", zap.String("channel", string(ch)), zap.Error(err))
		}
		if err == nil && n == l.cfg.Batch {
			continue // more may be due
		}
		select {
		case <-ctx.Done():
		case <-l.kicks[ch]:
		case <-tick.C:
		}
	}
}

// drain claims one batch and sends it, Concurrency at a time.
func (l *Loop) drain(ctx context.Context, ch Channel, s Sender) (int, error) {
	batch, err := l.store.Claim(ctx, ch, l.cfg.Batch, l.cfg.Lease)
	if err != nil {
		return 0, err
	}
	sem := make(chan struct{}, l.cfg.Concurrency)
	var wg sync.WaitGroup
	for _, d := range batch {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			l.send(ctx, s, d)
		})
	}
	wg.Wait()
	return len(batch), nil
}

// send makes one attempt and records its outcome. A send already started finishes and is recorded
// even while stopping, so nothing is sent twice because its outcome was lost.
func (l *Loop) send(ctx context.Context, s Sender, d Delivery) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.SendTimeout)
	defer cancel()
	err := s.Send(sctx, d)
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer rcancel()
	log := l.log.With(zap.String("channel", string(d.Channel)), zap.Int64("notification_id", d.ID), zap.Int("attempt", d.Attempt))
	var rerr error
	outcome := "sent"
	switch {
	case err == nil:
		rerr = l.store.MarkSent(rctx, d)
	case l.cfg.Retry.GiveUp(d.Attempt, err):
		outcome = "failed"
		log.Error("delivery: failed for good", zap.Error(err))
		rerr = l.store.MarkFailed(rctx, d, err)
	default:
		outcome = "retried"
		wait := l.cfg.Retry.Delay(d.Attempt)
		log.Warn("delivery: failed, retrying", zap.Duration("in", wait), zap.Error(err))
		rerr = l.store.Retry(rctx, d, wait, err)
	}
	if l.cfg.Outcomes != nil {
		l.cfg.Outcomes.WithLabelValues(string(d.Channel), outcome).Inc()
	}
	if rerr != nil {
		// The claim's lease makes the delivery due again; at worst it is sent once more.
		log.Error("delivery: recording the outcome failed", zap.Error(rerr))
	}
}
