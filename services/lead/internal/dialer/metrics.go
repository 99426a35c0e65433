package dialer

import (
	"strconv"

	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/pacer"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the pacing figures of each order on lead-api's /metrics (docs/operations.md): set
// by every paced lease and pace read, so an order nobody paces keeps its last figures.
type Metrics struct {
	level, inFlight, abandon, ofLimit *prometheus.GaugeVec
}

// NewMetrics registers the pacing gauges on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		level: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dialer_dial_level",
			Help: "The pacer's dial level of the order, at its latest paced lease or pace read."}, []string{"order_id"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dialer_calls_in_flight",
			Help: "The order's calls in flight (leads under a live lease), at its latest paced lease or pace read."}, []string{"order_id"}),
		abandon: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dialer_abandon_rate",
			Help: "Abandoned of live calls of the order over the window (a fraction)."}, []string{"order_id", "window"}),
		ofLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dialer_abandon_rate_of_limit",
			Help: "The order's abandon rate over its abandonWindow as a fraction of its maxAbandonRatePercent (1: at the limit)."},
			[]string{"order_id"}),
	}
	reg.MustRegister(m.level, m.inFlight, m.abandon, m.ofLimit)
	return m
}

// observe records one decision for order o and what it read.
func (m *Metrics) observe(o orders.Order, d pacer.Decision, in paceInputs) {
	if m == nil {
		return
	}
	id := strconv.FormatInt(o.ID, 10)
	m.level.WithLabelValues(id).Set(d.DialLevel)
	m.inFlight.WithLabelValues(id).Set(float64(len(in.inFlight)))
	rates := map[string]*float64{"24h": Rate(in.stats.Abandoned24h, in.stats.Live24h), "30d": Rate(in.stats.Abandoned30d, in.stats.Live30d)}
	for window, r := range rates {
		if r != nil {
			m.abandon.WithLabelValues(id, window).Set(*r)
		}
	}
	limit := o.MaxAbandonRatePercent
	if limit <= 0 {
		limit = defaultMaxAbandonRatePercent
	}
	if r := rates[AbandonWindowOf(o)]; r != nil {
		m.ofLimit.WithLabelValues(id).Set(*r * 100 / limit)
	}
}
