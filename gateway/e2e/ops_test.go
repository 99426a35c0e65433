package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"ccplatform/gateway/internal/route"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opsURL is where a process of the stack serves /livez, /readyz and /metrics: its own address,
// or, for the gateway, its private metrics listener.
func opsURL(name string) string {
	if name == "gateway" {
		return stack.MetricsURL(name)
	}
	return stack.URL(name)
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// withDatabase are the processes that keep a connection pool.
var withDatabase = map[string]bool{"user": true, "order": true, "lead-api": true, "lead-worker": true,
	"call": true, "call-ingest": true, "notification-api": true, "notification-worker": true, "webhook-api": true,
	"webhook-dispatcher": true, "report": true, "report-worker": true}

func TestEveryProcessServesProbesAndMetrics(t *testing.T) {
	for _, p := range processes {
		t.Run(p.name, func(t *testing.T) {
			base := opsURL(p.name)
			code, body := fetch(t, base+"/livez")
			assert.Equal(t, http.StatusOK, code)
			assert.Contains(t, body, `"status":"ok"`)
			code, body = fetch(t, base+"/readyz")
			assert.Equal(t, http.StatusOK, code, body)
			assert.Contains(t, body, `"status":"ready"`)
			code, body = fetch(t, base+"/metrics")
			require.Equal(t, http.StatusOK, code)
			for _, name := range []string{"app_build_info{", "app_ready 1", "go_goroutines", "process_resident_memory_bytes"} {
				assert.Contains(t, body, name)
			}
			if withDatabase[p.name] {
				assert.Contains(t, body, fmt.Sprintf(`go_sql_open_connections{db_name=%q}`, p.name))
			}
			if p.consumer {
				assert.Contains(t, body, "mq_connected 1")
			}
		})
	}
}

func TestTheGatewaysMetricsAreNotPublic(t *testing.T) {
	code, _ := fetch(t, stack.BaseURL+"/metrics")
	assert.Equal(t, http.StatusNotFound, code)
	// The probes are: an orchestrator has no API key.
	for _, path := range []string{"/livez", "/readyz"} {
		code, _ = fetch(t, stack.BaseURL+path)
		assert.Equal(t, http.StatusOK, code, path)
	}
}

// TestEveryProcessesMetricsPassPromtool lints each process's exposition with Prometheus's own
// checker (naming, units, help texts, histogram shapes).
func TestEveryProcessesMetricsPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "promtool comes with Debian's prometheus package; scripts/deps.sh installs it")
	for _, p := range processes {
		t.Run(p.name, func(t *testing.T) {
			code, body := fetch(t, opsURL(p.name)+"/metrics")
			require.Equal(t, http.StatusOK, code)
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = strings.NewReader(body)
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, "promtool check metrics:\n%s", out)
		})
	}
}

// seriesPerProcess counts the series of the families that requests can touch (http_*,
// gateway_*, idempotency_*), per process.
func seriesPerProcess(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range processes {
		_, body := fetch(t, opsURL(p.name)+"/metrics")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(body))
		require.NoError(t, err, p.name)
		for name, mf := range families {
			if strings.HasPrefix(name, "http_") || strings.HasPrefix(name, "gateway_") || strings.HasPrefix(name, "idempotency_") {
				out[p.name+" "+name] += len(mf.GetMetric())
			}
		}
	}
	return out
}

// TestSeriesDoNotGrowWithIDs sends 1,000 distinct ids through every route that takes one, and
// 1,000 unknown paths, and checks that no process has one series more afterwards: no id, path or
// phone ever becomes a label.
func TestSeriesDoNotGrowWithIDs(t *testing.T) {
	var routes []route.Route
	for _, r := range route.Table() {
		if strings.Contains(r.Path, "/:") {
			routes = append(routes, r)
		}
	}
	require.NotEmpty(t, routes)
	send := func(from, to int) {
		var wg sync.WaitGroup
		work := make(chan string)
		for range 8 {
			wg.Go(func() {
				for req := range work {
					method, path, _ := strings.Cut(req, " ")
					var body io.Reader
					if method == http.MethodPost {
						body = bytes.NewReader([]byte(`{}`))
					}
					r, err := http.NewRequestWithContext(context.Background(), method, stack.BaseURL+path, body)
					if err != nil {
						continue
					}
					r.Header.Set("X-Api-Key", stack.APIKey)
					r.Header.Set("Content-Type", "application/json")
					if resp, err := stack.Do(t, r); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}
			})
		}
		for i := from; i < to; i++ {
			// Ids that exist nowhere (so nothing is changed), distinct on every request.
			id := fmt.Sprint(2_000_000_000 + i)
			for _, r := range routes {
				work <- r.Method + " " + r.Path[:strings.Index(r.Path, "/:")] + "/" + id
			}
			work <- fmt.Sprintf("GET /v2/no-such-route/%d?phone=%d", i, 79_000_000_000+i)
		}
		close(work)
		wg.Wait()
	}
	send(0, 3) // every route's answers seen once
	// A process counts its first /metrics scrape once it has answered it: scrape once so that
	// "before" holds that series too when this test runs alone.
	seriesPerProcess(t)
	before := seriesPerProcess(t)
	send(3, 1003)
	assert.Equal(t, before, seriesPerProcess(t))
}

// sample reads one series of a process's metrics: the sum over the series of family name whose
// labels include every label given (0 when there is none).
func sample(t *testing.T, process, name string, labels map[string]string) float64 {
	t.Helper()
	_, body := fetch(t, opsURL(process)+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	var sum float64
	mf, ok := families[name]
	if !ok {
		return 0
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// TestMetricsCountWhatHappens follows one refused request, one forwarded create and one async
// lead create through the counters of the processes that see them.
func TestMetricsCountWhatHappens(t *testing.T) {
	type series struct {
		process, name string
		labels        map[string]string
	}
	refused := series{"gateway", "gateway_auth_refusals_total", map[string]string{"reason": "missing_key"}}
	forwarded := series{"gateway", "gateway_upstream_requests_total", map[string]string{"upstream": "order", "status_class": "2xx"}}
	routed := series{"order", "http_requests_total", map[string]string{"route": "/v2/order/create", "method": "POST", "status_class": "2xx"}}
	accepted := series{"lead-api", "lead_async_jobs_total", map[string]string{"state": "accepted"}}
	published := series{"lead-api", "mq_publish_confirms_total", map[string]string{"routing_key": "lead.jobs", "result": "ack"}}
	created := series{"lead-worker", "lead_async_jobs_total", map[string]string{"state": "created"}}
	consumed := series{"lead-worker", "mq_deliveries_total", map[string]string{"queue": "lead.jobs"}}
	all := []series{refused, forwarded, routed, accepted, published, created, consumed}
	before := map[string]float64{}
	for _, s := range all {
		before[s.process+s.name] = sample(t, s.process, s.name, s.labels)
	}
	grew := func(s series) float64 { return sample(t, s.process, s.name, s.labels) - before[s.process+s.name] }

	r := stack.Call(t, http.MethodGet, "/v2/order/detail/1/", nil, WithKey(""))
	require.Equal(t, http.StatusUnauthorized, r.Status)
	assert.Equal(t, 1.0, grew(refused))

	orderID, code := leadOrder(t, "Metrics order")
	assert.GreaterOrEqual(t, grew(forwarded), 1.0)
	assert.GreaterOrEqual(t, grew(routed), 1.0)

	r = stack.Call(t, http.MethodPost, "/v2/lead/create-async/",
		fmt.Sprintf(`{"leadType":"straight","phone":%q,"orderId":%d,"orderCode":%q}`, newPhone(), orderID, code))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, 1.0, grew(accepted))
	assert.GreaterOrEqual(t, grew(published), 1.0)
	assert.Eventually(t, func() bool { return grew(created) >= 1 && grew(consumed) >= 1 }, 10*time.Second, 50*time.Millisecond)

	// The broker's view of the queues, as the gateway exports it for the alerts.
	assert.Equal(t, 1.0, sample(t, "gateway", "queue_consumers_required", map[string]string{"queue": "lead.jobs"}))
	assert.GreaterOrEqual(t, sample(t, "gateway", "queue_consumers", map[string]string{"queue": "lead.jobs"}), 1.0)
	_, exposition := fetch(t, opsURL("gateway")+"/metrics")
	for _, q := range []string{"lead.jobs", "lead.jobs.dead", "lead.call-finished", "telephony.calls.dead", "notification.commands"} {
		assert.Contains(t, exposition, fmt.Sprintf("queue_messages{queue=%q}", q))
	}
	assert.Equal(t, 1.0, sample(t, "lead-worker", "mq_connected", nil))
	assert.GreaterOrEqual(t, sample(t, "lead-worker", "mq_consumers", map[string]string{"queue": "lead.jobs"}), 1.0)
}
