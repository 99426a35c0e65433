package asynccreate_test

import (
	"testing"

	"ccplatform/services/lead/internal/asynccreate"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
)

// A fresh lead-worker exports both states it counts at 0 (lead-api makes its own "accepted").
func TestCountingStartsEveryStateAtZero(t *testing.T) {
	jobs := asynccreate.NewStateCounter(prometheus.NewPedanticRegistry())
	asynccreate.NewWorker(nil, nil, zap.NewNop(), 1).Counting(jobs)
	assert.Equal(t, 2, testutil.CollectAndCount(jobs))
	for _, s := range []string{"created", "failed"} {
		assert.Zero(t, testutil.ToFloat64(jobs.WithLabelValues(s)), s)
	}
}
