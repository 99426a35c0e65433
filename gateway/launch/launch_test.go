package launch

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"ccplatform/pkg/config"
	"ccplatform/pkg/ops"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestConfigDefaults(t *testing.T) {
	for _, k := range []string{"HTTP_ADDR", "USER_URL", "ORDER_URL", "LEAD_URL", "CALL_URL", "NOTIFICATION_URL", "WEBHOOK_URL", "AUTH_CACHE_TTL", "BODY_LIMIT_BYTES", "UPSTREAM_TIMEOUT", "RATE_LIMIT_RPS", "RATE_LIMIT_BURST", "QUEUE_CONSUMERS", "TELEPHONY_PLATFORM_URL", "VOICE_PLATFORM_URL", "HEALTH_TIMEOUT",
		"LEAD_WORKER_URL", "CALL_INGEST_URL", "NOTIFICATION_WORKER_URL", "WEBHOOK_DISPATCHER_URL"} {
		t.Setenv(k, "") // restored after the test
		require.NoError(t, os.Unsetenv(k))
	}
	cfg, err := config.Load[Config]()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", cfg.HTTPAddr)
	assert.Equal(t, "http://127.0.0.1:8081", cfg.UserURL)
	assert.Equal(t, "http://127.0.0.1:8082", cfg.OrderURL)
	assert.Empty(t, cfg.LeadURL)
	assert.Equal(t, time.Second, cfg.AuthCacheTTL, "a revoked key stops within 1 s")
	assert.Equal(t, int64(1<<20), cfg.BodyLimitBytes)
	assert.Equal(t, 10*time.Second, cfg.UpstreamTimeout)
	assert.Equal(t, 200.0, cfg.RateLimitRPS)
	assert.Equal(t, 400, cfg.RateLimitBurst)
	assert.Equal(t, "lead.jobs:1,telephony.calls:1,notification.commands:1,webhook.events:1", cfg.QueueConsumers)
	assert.Equal(t, 300*time.Millisecond, cfg.HealthTimeout)
	assert.Empty(t, cfg.TelephonyPlatformURL)
	assert.Empty(t, cfg.VoicePlatformURL)
	assert.Empty(t, cfg.CallIngestURL, "a consumer is probed only when its listener is given")
}

// ORDER_URL="" means the order service is not deployed, as the README says, not the default
// address; USER_URL="" leaves the gateway without the key check, which it refuses.
func TestEmptyServiceURLIsNotDeployed(t *testing.T) {
	t.Setenv("ORDER_URL", "")
	t.Setenv("USER_URL", "")
	cfg, err := config.Load[Config]()
	require.NoError(t, err)
	assert.Empty(t, cfg.OrderURL)
	cfg.HTTPAddr = "127.0.0.1:0"
	err = Run(context.Background(), cfg, zap.NewNop(), ops.New("gateway"), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "USER_URL is required")
}

func TestRunRefusesBadConfig(t *testing.T) {
	base := Config{HTTPAddr: "127.0.0.1:0", UserURL: "http://127.0.0.1:1", BodyLimitBytes: 1, UpstreamTimeout: time.Second}
	for name, mutate := range map[string]func(*Config){
		"no user":     func(c *Config) { c.UserURL = "" },
		"bad url":     func(c *Config) { c.OrderURL = "127.0.0.1:8082" },
		"no body":     func(c *Config) { c.BodyLimitBytes = 0 },
		"no timeout":  func(c *Config) { c.UpstreamTimeout = 0 },
		"bad address": func(c *Config) { c.HTTPAddr = "nowhere:-1" },
		"bad queues":  func(c *Config) { c.QueueConsumers = "lead.jobs:none" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := base
			mutate(&cfg)
			assert.Error(t, Run(context.Background(), cfg, zap.NewNop(), ops.New("gateway"), Options{}))
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestRunServesAndStops(t *testing.T) {
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	var err error

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := Config{HTTPAddr: addr, MetricsAddr: metricsAddr, UserURL: "http://127.0.0.1:1", BodyLimitBytes: 1 << 20, UpstreamTimeout: time.Second, AuthCacheTTL: time.Second, RateLimitRPS: 10, RateLimitBurst: 10}
	go func() { done <- Run(ctx, cfg, zap.NewNop(), ops.New("gateway"), Options{}) }()

	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = http.Get("http://" + addr + "/livez")
		return err == nil
	}, 5*time.Second, 20*time.Millisecond)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// The metrics are served on their own listener only, never on the public port.
	resp, err = http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `http_requests_total{method="GET",route="/livez",status_class="2xx"} 1`)
	resp, err = http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("did not stop")
	}
}

func TestServerTimeouts(t *testing.T) {
	assert.Equal(t, 30*time.Second, serverTimeouts(10*time.Second).Write)
	assert.Equal(t, 65*time.Second, serverTimeouts(time.Minute).Write)
}
