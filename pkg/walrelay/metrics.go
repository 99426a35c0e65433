package walrelay

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are a relay's own: what it published, whether it holds the slot, and how long the
// oldest message it received has waited for the broker's confirm.
type Metrics struct {
	published, invalid, recreated prometheus.Counter
	holding                       prometheus.Gauge
	lag                           prometheus.GaugeFunc
	// oldest is the commit time (Unix ns) of the oldest transaction received and not yet
	// confirmed; 0 when there is none.
	oldest atomic.Int64
}

// NewMetrics are the metrics of a relay of slot (the label).
func NewMetrics(slot string) *Metrics {
	l := prometheus.Labels{"slot": slot}
	m := &Metrics{
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "walrelay_published_total",
			Help: "Messages read from the slot and published with the broker's confirm.", ConstLabels: l}),
		invalid: prometheus.NewCounter(prometheus.CounterOpts{Name: "walrelay_invalid_total",
			Help: "Messages under the relay's prefix that could not be read, passed over.", ConstLabels: l}),
		recreated: prometheus.NewCounter(prometheus.CounterOpts{Name: "walrelay_slot_recreated_total",
			Help: "Times the relay found its slot missing or invalidated and made it anew (what was committed meanwhile was not relayed).", ConstLabels: l}),
		holding: prometheus.NewGauge(prometheus.GaugeOpts{Name: "walrelay_holding",
			Help: "1 while this relay holds the slot (one relay across the replicas).", ConstLabels: l}),
	}
	m.lag = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "walrelay_lag_seconds",
		Help: "Age of the commit of the oldest transaction the relay received and the broker has not yet confirmed (0 when none).", ConstLabels: l},
		func() float64 {
			at := m.oldest.Load()
			if at == 0 {
				return 0
			}
			return max(time.Since(time.Unix(0, at)).Seconds(), 0)
		})
	return m
}

// Describe sends the descriptors.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range []prometheus.Collector{m.published, m.invalid, m.recreated, m.holding, m.lag} {
		c.Describe(ch)
	}
}

// Collect sends the values.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range []prometheus.Collector{m.published, m.invalid, m.recreated, m.holding, m.lag} {
		c.Collect(ch)
	}
}

// SlotCollector reports the slot as the database sees it, at each scrape and from any replica
// (holding it or not): the WAL it holds back behind the server's position, whether a relay reads
// it, and whether it is usable at all (missing, or invalidated past max_slot_wal_keep_size, it is
// not). A database that does not answer within a second leaves them out of that scrape.
type SlotCollector struct {
	db                   *sqlx.DB
	slot                 string
	lag, active, present *prometheus.Desc
}

// NewSlotCollector reads slot in db.
func NewSlotCollector(db *sqlx.DB, slot string) *SlotCollector {
	l := prometheus.Labels{"slot": slot}
	return &SlotCollector{db: db, slot: slot,
		lag: prometheus.NewDesc("walrelay_slot_lag_bytes",
			"WAL bytes between the server's position and what the slot's relay confirmed.", nil, l),
		active: prometheus.NewDesc("walrelay_slot_active",
			"1 while a relay reads the slot.", nil, l),
		present: prometheus.NewDesc("walrelay_slot_usable",
			"1 while the slot exists and still has all the WAL it needs (not lost past max_slot_wal_keep_size).", nil, l),
	}
}

// Describe sends the descriptors.
func (c *SlotCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.active
	ch <- c.present
}

// Collect reads pg_replication_slots.
func (c *SlotCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var rows []struct {
		Lag    float64 `db:"lag"`
		Active bool    `db:"active"`
		Lost   bool    `db:"lost"`
	}
	err := c.db.SelectContext(ctx, &rows, `SELECT
		coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn), 0)::float8 AS lag,
		active, coalesce(wal_status = 'lost', false) AS lost
		FROM pg_replication_slots WHERE slot_name = $1`, c.slot)
	if err != nil {
		return
	}
	usable := 0.0
	if len(rows) == 1 && !rows[0].Lost {
		usable = 1
	}
	ch <- prometheus.MustNewConstMetric(c.present, prometheus.GaugeValue, usable)
	if len(rows) != 1 {
		return
	}
	active := 0.0
	if rows[0].Active {
		active = 1
	}
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, rows[0].Lag)
	ch <- prometheus.MustNewConstMetric(c.active, prometheus.GaugeValue, active)
}
