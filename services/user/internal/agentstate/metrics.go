package agentstate

import (
	"context"
	"time"

	"ccplatform/pkg/telephony"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports the active agents in each state (`agents{state}`), counted when scraped: one
// grouped count over the current states, so the figure is never stale and costs nothing between
// scrapes.
type Collector struct {
	store *Store
	desc  *prometheus.Desc
}

// NewCollector counts in store.
func NewCollector(store *Store) *Collector {
	return &Collector{store: store, desc: prometheus.NewDesc("agents", "Active agents by their current state.", []string{"state"}, nil)}
}

// Describe is prometheus.Collector's.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect is prometheus.Collector's. A failed count exports nothing (the scrape shows the gap)
// rather than zeros that would read as no agents.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.store.ByState(ctx)
	if err != nil {
		return
	}
	for _, s := range telephony.AgentStates() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[s]), s)
	}
}
