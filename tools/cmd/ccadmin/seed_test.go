package main

import (
	"bytes"
	"context"
	"testing"

	"ccplatform/tools/internal/seed"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	all.UserURL, all.OrderURL, all.LeadURL, all.CallURL, all.AMQPURL = "http://u", "http://o", "http://l", "http://c", "amqp://b"
	for _, tc := range []struct {
		name  string
		unset func(*settings)
		want  []string
		skip  string
	}{
		{"everything", func(*settings) {}, []string{"demo orders", "demo leads", "demo calls"}, ""},
		{"no order service", func(s *settings) { s.OrderURL = "" }, []string{"demo orders, leads and calls"},
			"seed demo orders, leads and calls: skipped: ORDER_URL is empty\n"},
		{"no user service", func(s *settings) { s.UserURL = "" }, []string{"demo orders, leads and calls"},
			"seed demo orders, leads and calls: skipped: USER_URL is empty\n"},
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

// TestSeedWithoutServicesSkipsEveryPart runs the whole command with every service but the user
// service unset: each part says it was skipped, on stdout, and nothing fails. The parts run
// against the real services in gateway/e2e (demo_test.go).
func TestSeedWithoutServicesSkipsEveryPart(t *testing.T) {
	out, _, err := ccadmin(t, "seed", "--demo")
	require.NoError(t, err)
	assert.Equal(t, "seed order custom fields: skipped: ORDER_URL is empty\n"+
		"seed lead custom fields: skipped: LEAD_URL is empty\n"+
		"seed demo orders, leads and calls: skipped: ORDER_URL is empty\n", out)
}
