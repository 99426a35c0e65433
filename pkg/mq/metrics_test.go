package mq

import (
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// series lists every series reg exposes as name{label=value,...} (labels sorted), with its value.
func series(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

// A queue the process consumes and an exchange and routing key it published to have every series
// at 0 from the first scrape, so a fresh process exports each mq_* metric and rate() sees the
// first dead letter.
func TestMetricsStartAtZeroForKnownLabels(t *testing.T) {
	c := &Conn{metrics: newMetrics()}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c.Collectors()...)
	assert.Empty(t, series(t, reg), "nothing consumed or published yet")

	c.subs.of("lead.jobs")
	c.metrics.publishes.WithLabelValues("", "lead.jobs")
	got := series(t, reg)
	want := []string{
		"mq_consumers{queue=lead.jobs}",
		"mq_oldest_unacked_seconds{queue=lead.jobs}",
		"mq_max_unacked_age_seconds{queue=lead.jobs}",
		"mq_deliveries_total{queue=lead.jobs}",
		"mq_acks_total{queue=lead.jobs}",
		"mq_retries_total{queue=lead.jobs}",
		"mq_dead_letters_total{queue=lead.jobs,reason=refused}",
		"mq_dead_letters_total{queue=lead.jobs,reason=max_attempts}",
		"mq_dead_letters_total{queue=lead.jobs,reason=undelivered}",
		"mq_handler_duration_seconds{queue=lead.jobs}",
		"mq_batch_size{queue=lead.jobs}",
		"mq_publishes_total{exchange=,routing_key=lead.jobs}",
		"mq_publish_confirms_total{exchange=,result=ack,routing_key=lead.jobs}",
		"mq_publish_confirms_total{exchange=,result=nack,routing_key=lead.jobs}",
		"mq_publish_returns_total{exchange=,routing_key=lead.jobs}",
	}
	for _, s := range want {
		v, ok := got[s]
		if assert.True(t, ok, "missing %s in %v", s, got) {
			assert.Zero(t, v, s)
		}
	}
	assert.Len(t, got, len(want))
}
