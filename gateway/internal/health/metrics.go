package health

import (
	"context"
	"strings"
	"sync"
	"time"

	"ccplatform/pkg/mq"

	"github.com/prometheus/client_golang/prometheus"
)

// QueueCollector exports, at each scrape, every watched queue's depth and consumer count as the
// broker reports them, and the consumers each needs (QUEUE_CONSUMERS): what the alerts on
// backlogs, missing consumers and dead letters read. Each queue has its dead-letter twin
// (<queue>.dead) watched too. A queue the broker cannot report is left out of that scrape rather
// than reported as 0, which would read as "empty".
type QueueCollector struct {
	conn    *mq.Conn
	queues  []string
	needs   map[string]int
	timeout time.Duration

	messages, consumers, required *prometheus.Desc
}

// NewQueueCollector watches queues (and their dead-letter queues) on conn.
func NewQueueCollector(conn *mq.Conn, queues []string, needs []Need, timeout time.Duration) *QueueCollector {
	c := &QueueCollector{conn: conn, needs: map[string]int{}, timeout: timeout,
		messages:  prometheus.NewDesc("queue_messages", "Messages ready for delivery in the queue (unacknowledged ones not counted), as the broker reports them.", []string{"queue"}, nil),
		consumers: prometheus.NewDesc("queue_consumers", "Consumers subscribed to the queue, as the broker reports them.", []string{"queue"}, nil),
		required:  prometheus.NewDesc("queue_consumers_required", "Consumers the queue needs (QUEUE_CONSUMERS).", []string{"queue"}, nil),
	}
	for _, n := range needs {
		c.needs[n.Queue] = n.Consumers
	}
	seen := map[string]bool{}
	for _, q := range queues {
		q = strings.TrimSpace(q)
		if q == "" || seen[q] {
			continue
		}
		seen[q] = true
		c.queues = append(c.queues, q, q+mq.DeadLetterSuffix)
	}
	return c
}

// Describe sends the three descriptors.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.messages
	ch <- c.consumers
	ch <- c.required
}

// Collect asks the broker about every queue in parallel, each bounded by the timeout.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	for q, n := range c.needs {
		ch <- prometheus.MustNewConstMetric(c.required, prometheus.GaugeValue, float64(n), q)
	}
	if !c.conn.Connected() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, q := range c.queues {
		wg.Go(func() {
			consumers, messages, err := c.conn.QueueConsumers(ctx, q)
			if err != nil {
				return
			}
			ch <- prometheus.MustNewConstMetric(c.messages, prometheus.GaugeValue, float64(messages), q)
			ch <- prometheus.MustNewConstMetric(c.consumers, prometheus.GaugeValue, float64(consumers), q)
		})
	}
	wg.Wait()
}
