package delivery_test

import (
	"testing"

	"ccplatform/services/notification/internal/delivery"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
)

// A fresh worker exports every outcome of each channel it sends at 0, and nothing for a channel it
// does not send.
func TestOutcomesStartAtZeroForEveryConfiguredChannel(t *testing.T) {
	outcomes := delivery.NewOutcomeCounter(prometheus.NewPedanticRegistry())
	senders := map[delivery.Channel]delivery.Sender{delivery.Live: nil, delivery.Email: nil}
	delivery.NewLoop(nil, senders, delivery.LoopConfig{Outcomes: outcomes}, zap.NewNop())
	assert.Equal(t, 6, testutil.CollectAndCount(outcomes))
	for _, ch := range []delivery.Channel{delivery.Live, delivery.Email} {
		for _, o := range []string{"sent", "retried", "failed"} {
			assert.Zero(t, testutil.ToFloat64(outcomes.WithLabelValues(string(ch), o)), "%s %s", ch, o)
		}
	}
}
