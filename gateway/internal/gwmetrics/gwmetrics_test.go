package gwmetrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
)

// Every label value known in advance is exposed at 0 by a fresh gateway, so dashboards and the
// monitoring check find the metric, and rate() sees the first refusal or rejection.
func TestKnownLabelValuesStartAtZero(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	s := New(reg)
	for vec, values := range map[*prometheus.CounterVec][]string{
		s.AuthRefusals: {"missing_key", "unknown_key", "user_unavailable", "forbidden"},
		s.RateLimited:  {"key", "auth_failure", "streams"},
	} {
		assert.Equal(t, len(values), testutil.CollectAndCount(vec))
		for _, v := range values {
			assert.Zero(t, testutil.ToFloat64(vec.WithLabelValues(v)), v)
		}
	}
	assert.Equal(t, 2, testutil.CollectAndCount(reg, "gateway_auth_cache_lookups_total"))
}
