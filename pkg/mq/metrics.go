package mq

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// deadLetterReasons are the reason label values of mq_dead_letters_total (consumer.go's deadLetter
// kinds).
var deadLetterReasons = []string{"refused", "max_attempts", "undelivered"}

// confirmResults are the result label values of mq_publish_confirms_total.
var confirmResults = []string{"ack", "nack"}

// metrics are a connection's publish and consume metrics (docs/operations.md). They are made with
// the connection and count from the start; Collectors hands them to the process's registry.
//
// Every series whose labels are known in advance starts at 0 (Prometheus's advice for labelled
// counters): rate() then sees the first dead letter, retry or returned message, and dashboards and
// checks find the metric on a fresh process instead of no series at all. A consumed queue's series
// exist from the first scrape after its consumer started (connCollector), an exchange and routing
// key's confirm and return series from its first publish (publishVec).
type metrics struct {
	publishes                              publishVec
	confirms, returns                      *prometheus.CounterVec
	deliveries, acks, retries, deadLetters *prometheus.CounterVec
	handlerDuration, batchSize             *prometheus.HistogramVec
	consumers, oldestUnacked, unackedBound *prometheus.Desc
}

func newMetrics() *metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &metrics{
		confirms:    counter("mq_publish_confirms_total", "Publisher confirms received, by exchange, routing key and result (ack, nack).", "exchange", "routing_key", "result"),
		returns:     counter("mq_publish_returns_total", "Published messages the broker could not route to any queue, by exchange and routing key.", "exchange", "routing_key"),
		deliveries:  counter("mq_deliveries_total", "Messages delivered to this process's consumers, by queue.", "queue"),
		acks:        counter("mq_acks_total", "Deliveries acknowledged after handling, by queue.", "queue"),
		retries:     counter("mq_retries_total", "Deliveries handed back for another try (transient failures), by queue.", "queue"),
		deadLetters: counter("mq_dead_letters_total", "Messages moved to the dead-letter queue, by queue and reason (refused, max_attempts, undelivered).", "queue", "reason"),
		handlerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mq_handler_duration_seconds", Help: "Time one handler call took over one batch, by queue.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"queue"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mq_batch_size", Help: "Messages per batch handed to a handler, by queue.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
		}, []string{"queue"}),
		consumers: prometheus.NewDesc("mq_consumers", "Consumers of this process subscribed to the queue now.", []string{"queue"}, nil),
		oldestUnacked: prometheus.NewDesc("mq_oldest_unacked_seconds",
			"Age of the oldest delivery this process's consumers of the queue hold unacknowledged (0: none).", []string{"queue"}, nil),
		unackedBound: prometheus.NewDesc("mq_max_unacked_age_seconds",
			"The bound on mq_oldest_unacked_seconds past which the queue's consumers are stalled (ConsumerConfig.MaxUnackedAge).", []string{"queue"}, nil),
	}
	m.publishes = publishVec{counter("mq_publishes_total", "Messages published, by exchange and routing key.", "exchange", "routing_key"), m}
	return m
}

// publishVec is mq_publishes_total. Taking an exchange and routing key's counter (once per
// Publish) also makes that pair's confirm and return series, at 0.
type publishVec struct {
	*prometheus.CounterVec
	m *metrics
}

// WithLabelValues is the counter of exchange and routing key (in that order).
func (v publishVec) WithLabelValues(lvs ...string) prometheus.Counter {
	c := v.CounterVec.WithLabelValues(lvs...)
	for _, r := range confirmResults {
		v.m.confirms.WithLabelValues(lvs[0], lvs[1], r)
	}
	v.m.returns.WithLabelValues(lvs...)
	return c
}

// initQueue makes every series of a consumed queue exist, at 0.
func (m *metrics) initQueue(queue string) {
	m.deliveries.WithLabelValues(queue)
	m.acks.WithLabelValues(queue)
	m.retries.WithLabelValues(queue)
	for _, r := range deadLetterReasons {
		m.deadLetters.WithLabelValues(queue, r)
	}
	m.handlerDuration.WithLabelValues(queue)
	m.batchSize.WithLabelValues(queue)
}

// connCollector is every metric of the connection in one collector, so that the queues its
// consumers subscribe to get their zero series before the vectors are read, in the same scrape.
type connCollector struct{ c *Conn }

func (cc connCollector) vectors() []prometheus.Collector {
	m := cc.c.metrics
	return []prometheus.Collector{m.publishes, m.confirms, m.returns, m.deliveries, m.acks, m.retries,
		m.deadLetters, m.handlerDuration, m.batchSize}
}

func (cc connCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range cc.vectors() {
		v.Describe(ch)
	}
	ch <- cc.c.metrics.consumers
	ch <- cc.c.metrics.oldestUnacked
	ch <- cc.c.metrics.unackedBound
}

func (cc connCollector) Collect(ch chan<- prometheus.Metric) {
	subs := cc.c.Subscriptions()
	for _, s := range subs {
		cc.c.metrics.initQueue(s.Queue)
	}
	for _, v := range cc.vectors() {
		v.Collect(ch)
	}
	for _, s := range subs {
		ch <- prometheus.MustNewConstMetric(cc.c.metrics.consumers, prometheus.GaugeValue, float64(s.Active), s.Queue)
		ch <- prometheus.MustNewConstMetric(cc.c.metrics.oldestUnacked, prometheus.GaugeValue, s.OldestUnacked.Seconds(), s.Queue)
		ch <- prometheus.MustNewConstMetric(cc.c.metrics.unackedBound, prometheus.GaugeValue, s.MaxUnackedAge.Seconds(), s.Queue)
	}
}

// Collectors are the connection's metrics, for the process's registry.
func (c *Conn) Collectors() []prometheus.Collector {
	return []prometheus.Collector{connCollector{c}}
}

// observeBatch records one handler call.
func (m *metrics) observeBatch(queue string, n int, took time.Duration) {
	m.deliveries.WithLabelValues(queue).Add(float64(n))
	m.batchSize.WithLabelValues(queue).Observe(float64(n))
	m.handlerDuration.WithLabelValues(queue).Observe(took.Seconds())
}
