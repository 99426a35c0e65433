package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	gwhealth "ccplatform/gateway/internal/health"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type component struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    struct {
		ExecutionTime *float64 `json:"executionTime"`
		ReasonPhrase  string   `json:"reasonPhrase"`
		Consumers     []struct {
			QueueName string `json:"queue_name"`
			Success   bool   `json:"success"`
			Data      struct {
				Current int `json:"current_consumers_count"`
				Needle  int `json:"needle_consumers_count"`
			} `json:"data"`
		} `json:"consumers"`
	} `json:"data"`
}

func health(t *testing.T) (Response, map[string]component, time.Duration) {
	t.Helper()
	start := time.Now()
	r := stack.Call(t, http.MethodGet, "/v1/health/check/", nil)
	took := time.Since(start)
	var m map[string]component
	require.NoError(t, json.Unmarshal(r.Env.Data, &m), "%s", r.Body)
	return r, m, took
}

// consumerProcess is the queue consumer the tests stop, and its queue.
func consumerProcess() (name, queue string) {
	for _, p := range processes {
		if p.name == "lead-worker" {
			return "lead-worker", "lead.jobs"
		}
	}
	return "notification-worker", "notification.commands"
}

func TestHealthCheckAllUp(t *testing.T) {
	r := waitStatus(t, http.StatusOK, func() Response { return stack.Call(t, http.MethodGet, "/v1/health/check/", nil) })
	assert.True(t, r.Env.Success, "%s", r.Body)
	assert.Equal(t, "", r.Env.Message)
	_, m, took := health(t)
	assert.Less(t, took, time.Second)

	want := []string{"serviceGateway", "serviceMicroRabbit", "serviceMicroMqHub", "telephonyPlatform", "voicePlatform"}
	for _, p := range processes {
		switch {
		case p.consumer:
			want = append(want, gwhealth.ConsumerKey(p.name))
		case p.name != "gateway":
			want = append(want, "service"+strings.ToUpper(p.name[:1])+strings.TrimSuffix(p.name[1:], "-api"))
		}
	}
	assert.Len(t, m, len(want))
	for _, k := range want {
		c, ok := m[k]
		require.True(t, ok, "component %s in %s", k, r.Body)
		assert.True(t, c.Success, k)
		assert.NotNil(t, c.Data.ExecutionTime, k)
	}
	assert.Equal(t, "not configured", m["telephonyPlatform"].Message)
	assert.Equal(t, "not configured", m["voicePlatform"].Message)
	queues := map[string]bool{}
	for _, q := range m["serviceMicroMqHub"].Data.Consumers {
		queues[q.QueueName] = true
		assert.True(t, q.Success, q.QueueName)
		assert.GreaterOrEqual(t, q.Data.Current, q.Data.Needle, q.QueueName)
		assert.Equal(t, 1, q.Data.Needle, q.QueueName)
	}
	assert.Equal(t, map[string]bool{"lead.jobs": true, "telephony.calls": true, "telephony.agents": true, "notification.commands": true, "webhook.events": true, "report.events": true}, queues)
}

func TestHealthCheckNoticesAStoppedConsumer(t *testing.T) {
	name, queue := consumerProcess()
	waitStatus(t, http.StatusOK, func() Response { return stack.Call(t, http.MethodGet, "/v1/health/check/", nil) })
	stack.Stop(name, syscall.SIGTERM)
	t.Cleanup(func() {
		require.NoError(t, stack.Start(name))
		waitStatus(t, http.StatusOK, func() Response { return stack.Call(t, http.MethodGet, "/v1/health/check/", nil) })
	})

	r := waitStatus(t, http.StatusServiceUnavailable, func() Response { return stack.Call(t, http.MethodGet, "/v1/health/check/", nil) })
	assert.False(t, r.Env.Success)
	assert.Contains(t, r.Env.Message, "serviceMicroMqHub")
	_, m, took := health(t)
	assert.Less(t, took, time.Second)
	hub := m["serviceMicroMqHub"]
	assert.False(t, hub.Success)
	found := false
	for _, q := range hub.Data.Consumers {
		if q.QueueName == queue {
			found = true
			assert.False(t, q.Success)
			assert.Less(t, q.Data.Current, q.Data.Needle)
		} else {
			assert.True(t, q.Success, "%s is unaffected", q.QueueName)
		}
	}
	assert.True(t, found, "queue %s is listed", queue)
	assert.True(t, m["serviceGateway"].Success, "the rest of the map is still there")
	assert.True(t, m["serviceMicroRabbit"].Success)
}

func TestHealthCheckNeedsAKey(t *testing.T) {
	r := stack.Call(t, http.MethodGet, "/v1/health/check/", nil, WithKey(""))
	assert.Equal(t, http.StatusUnauthorized, r.Status)
}
