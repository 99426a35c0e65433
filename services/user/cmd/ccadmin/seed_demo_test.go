package main

import (
	"bytes"
	"context"
	"testing"

	"ccplatform/services/user/internal/seed"

	"github.com/stretchr/testify/assert"
)

func TestDemoActivityIsSkippedPartByPart(t *testing.T) {
	names := func(steps []seed.Step) []string {
		out := make([]string, len(steps))
		for i, s := range steps {
			out[i] = s.Name
		}
		return out
	}
	all := testSettings()
	all.OrderURL, all.LeadURL, all.CallURL, all.AMQPURL = "http://o", "http://l", "http://c", "amqp://b"
	for _, tc := range []struct {
		name  string
		unset func(*settings)
		want  []string
		skip  string
	}{
		{"everything", func(*settings) {}, []string{"demo orders", "demo leads", "demo calls"}, ""},
		{"no order service", func(s *settings) { s.OrderURL = "" }, []string{"demo orders, leads and calls"},
			"seed demo orders, leads and calls: skipped: ORDER_URL is empty\n"},
		{"no lead service", func(s *settings) { s.LeadURL = "" }, []string{"demo orders", "demo leads and calls"},
			"seed demo leads and calls: skipped: LEAD_URL is empty\n"},
		{"no call service", func(s *settings) { s.CallURL = "" }, []string{"demo orders", "demo leads", "demo calls"},
			"seed demo calls: skipped: CALL_URL is empty\n"},
		{"no broker", func(s *settings) { s.AMQPURL = "" }, []string{"demo orders", "demo leads", "demo calls"},
			"seed demo calls: skipped: AMQP_URL is empty\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := all
			tc.unset(&cfg)
			steps := demoActivity(&env{cfg: cfg})
			assert.Equal(t, tc.want, names(steps))
			if tc.skip != "" {
				var out bytes.Buffer
				assert.NoError(t, seed.Run(context.Background(), &out, steps[len(steps)-1]))
				assert.Equal(t, tc.skip, out.String())
			}
		})
	}
}

func TestSeedWithoutServicesSkipsTheDemoOrders(t *testing.T) {
	out, _, err := ccadmin(t, "seed", "--demo")
	assert.NoError(t, err)
	assert.Contains(t, out, "seed demo orders, leads and calls: skipped: ORDER_URL is empty")
}
