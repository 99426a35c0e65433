package outbox

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
)

// Collector reports, at each scrape, the rows still to publish and the age of the oldest one: an
// outbox that grows or ages means events are not reaching the broker (the alert's metric). A
// database that does not answer within a second leaves both out of that scrape.
type Collector struct {
	db              *sqlx.DB
	pending, oldest *prometheus.Desc
	published       prometheus.Counter
}

// NewCollector reads the outbox table of db.
func NewCollector(db *sqlx.DB) *Collector {
	return &Collector{db: db,
		pending: prometheus.NewDesc("outbox_pending_events", "Outbox rows committed but not yet published.", nil, nil),
		oldest:  prometheus.NewDesc("outbox_oldest_event_age_seconds", "Age of the oldest outbox row not yet published (0 when none).", nil, nil),
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "outbox_published_total", Help: "Outbox rows published with the broker's confirm.",
		}),
	}
}

// Published is the counter a Relay adds its published rows to.
func (c *Collector) Published() prometheus.Counter { return c.published }

// Describe sends the descriptors.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.oldest
	c.published.Describe(ch)
}

// Collect reads the backlog (the partial index of unpublished rows keeps this cheap).
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.published.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var r struct {
		Pending int64   `db:"pending"`
		Oldest  float64 `db:"oldest"`
	}
	err := c.db.GetContext(ctx, &r, `SELECT count(*) AS pending,
		coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
		FROM outbox WHERE published_at IS NULL`)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(r.Pending))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, r.Oldest)
}
