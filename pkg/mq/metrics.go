package mq

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a connection's publish and consume metrics (docs/operations.md). They are made with
// the connection and count from the start; Collectors hands them to the process's registry.
type metrics struct {
	publishes, confirms, returns           *prometheus.CounterVec
	deliveries, acks, retries, deadLetters *prometheus.CounterVec
	handlerDuration, batchSize             *prometheus.HistogramVec
	consumers                              *prometheus.Desc
}

func newMetrics() *metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return &metrics{
		publishes:   counter("mq_publishes_total", "Messages published, by exchange and routing key.", "exchange", "routing_key"),
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
	}
}

// connCollector adds the per-queue subscription gauge to the connection's vectors.
type connCollector struct{ c *Conn }

func (cc connCollector) Describe(ch chan<- *prometheus.Desc) { ch <- cc.c.metrics.consumers }

func (cc connCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range cc.c.Subscriptions() {
		ch <- prometheus.MustNewConstMetric(cc.c.metrics.consumers, prometheus.GaugeValue, float64(s.Active), s.Queue)
	}
}

// Collectors are the connection's metrics, for the process's registry.
func (c *Conn) Collectors() []prometheus.Collector {
	m := c.metrics
	return []prometheus.Collector{m.publishes, m.confirms, m.returns, m.deliveries, m.acks, m.retries,
		m.deadLetters, m.handlerDuration, m.batchSize, connCollector{c}}
}

// observeBatch records one handler call.
func (m *metrics) observeBatch(queue string, n int, took time.Duration) {
	m.deliveries.WithLabelValues(queue).Add(float64(n))
	m.batchSize.WithLabelValues(queue).Observe(float64(n))
	m.handlerDuration.WithLabelValues(queue).Observe(took.Seconds())
}
