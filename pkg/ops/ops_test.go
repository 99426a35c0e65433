package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ccplatform/pkg/buildinfo"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestLivezAnswersWithTheVersion(t *testing.T) {
	code, body := get(t, New("t").Handler(), "/livez")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, fmt.Sprintf(`{"success":true,"message":"","data":{"status":"ok","version":%q}}`, buildinfo.Version), body)
}

func TestReadyzNamesEveryCheckAndFailsOnAnyOne(t *testing.T) {
	o := New("t")
	o.AddCheck("database", func(context.Context) error { return nil })
	code, body := get(t, o.Handler(), "/readyz")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"success":true,"message":"","data":{"status":"ready","checks":{"database":"ok"}}}`, body)

	o.AddCheck("broker", func(context.Context) error { return errors.New("not connected") })
	code, body = get(t, o.Handler(), "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.JSONEq(t, `{"success":false,"message":"not ready: broker: not connected",
		"data":{"status":"not ready","checks":{"database":"ok","broker":"not connected"}}}`, body)
}

func TestReadyzBoundsAHangingCheck(t *testing.T) {
	o := New("t")
	o.AddCheck("database", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	code, body := get(t, o.Handler(), "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "deadline exceeded")
}

func TestADrainingProcessIsNotReady(t *testing.T) {
	o := New("t")
	o.AddCheck("database", func(context.Context) error { return nil })
	o.Drain()
	code, body := get(t, o.Handler(), "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, `"status":"draining"`)
	assert.Equal(t, 0.0, gaugeValue(t, o, "app_ready"))
	code, _ = get(t, o.Handler(), "/livez")
	assert.Equal(t, http.StatusOK, code, "draining is not dead")
}

type broker struct {
	up                    bool
	consumers, deliveries error
}

func (b broker) Connected() bool          { return b.up }
func (b broker) ConsumersReady() error    { return b.consumers }
func (b broker) DeliveriesFlowing() error { return b.deliveries }

func (broker) Collectors() []prometheus.Collector { return nil }

func TestBrokerChecks(t *testing.T) {
	o := New("t")
	o.Broker(broker{up: true, consumers: errors.New("consumers not subscribed: lead.jobs 0/4")})
	r, ok := o.Ready(context.Background())
	assert.False(t, ok)
	assert.Equal(t, map[string]string{"broker": "ok", "consumers": "consumers not subscribed: lead.jobs 0/4", "deliveries": "ok"}, r.Checks)
	assert.Equal(t, 1.0, gaugeValue(t, o, "mq_connected"))
	assert.Equal(t, 0.0, gaugeValue(t, o, "app_ready"))
}

func TestAStalledConsumerIsDegraded(t *testing.T) {
	o := New("t")
	o.Broker(broker{up: true, deliveries: errors.New("stalled: telephony.calls: oldest unacked delivery 3m0s old (bound 2m0s)")})
	code, body := get(t, o.Handler(), "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, `"message":"degraded: deliveries: stalled: telephony.calls: oldest unacked delivery 3m0s old (bound 2m0s)"`)
	assert.Contains(t, body, `"status":"degraded"`)

	assert.Equal(t, 0.0, gaugeValue(t, o, "app_ready"))

	// Unreachable as well: that is the worse news.
	o = New("t")
	o.Broker(broker{up: false, deliveries: errors.New("stalled: telephony.calls")})
	_, body = get(t, o.Handler(), "/readyz")
	assert.Contains(t, body, `"status":"not ready"`)
}

func gaugeValue(t *testing.T, o *Ops, name string) float64 {
	t.Helper()
	mfs, err := o.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// engine is a service's engine as pkg/web builds it, with the ops routes and one parameterised
// route.
func engine(o *Ops) *gin.Engine {
	e := web.NewEngine(zap.NewNop(), web.DefaultBodyLimit, o.HTTPMetrics())
	o.Routes(e)
	e.GET("/v2/lead/detail/:id", func(c *gin.Context) {
		if c.Param("id") == "0" {
			web.Fail(c, errors.New("boom"))
			return
		}
		web.OK(c, nil)
	})
	e.GET("/panic", func(*gin.Context) { panic("boom") })
	return e
}

func TestHTTPMetricsLabelRouteTemplatesMethodsAndStatusClasses(t *testing.T) {
	o := New("t")
	e := engine(o)
	get(t, e, "/v2/lead/detail/7")
	get(t, e, "/v2/lead/detail/8")
	get(t, e, "/v2/lead/detail/0")
	get(t, e, "/no/such/path")
	get(t, e, "/panic")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("BREW", "/v2/lead/detail/7", nil))

	want := `
# HELP http_requests_total HTTP requests answered, by route template, method and status class.
# TYPE http_requests_total counter
http_requests_total{method="GET",route="/panic",status_class="5xx"} 1
http_requests_total{method="GET",route="/v2/lead/detail/:id",status_class="2xx"} 2
http_requests_total{method="GET",route="/v2/lead/detail/:id",status_class="5xx"} 1
http_requests_total{method="GET",route="unmatched",status_class="4xx"} 1
http_requests_total{method="other",route="unmatched",status_class="4xx"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(o.Registry, strings.NewReader(want), "http_requests_total"))
	assert.Equal(t, 5, testutil.CollectAndCount(o.http.duration), "one histogram per counter series")
}

// TestSeriesDoNotGrowWithIDsOrPaths drives 1,000 distinct ids and 1,000 distinct unknown paths
// through the engine: the number of series must not depend on them.
func TestSeriesDoNotGrowWithIDsOrPaths(t *testing.T) {
	o := New("t")
	e := engine(o)
	count := func() int {
		n, err := testutil.GatherAndCount(o.Registry, "http_requests_total", "http_request_duration_seconds")
		require.NoError(t, err)
		return n
	}
	get(t, e, "/v2/lead/detail/1")
	get(t, e, "/unknown/1")
	before := count()
	for i := range 1000 {
		get(t, e, fmt.Sprintf("/v2/lead/detail/%d", i+2))
		get(t, e, fmt.Sprintf("/unknown/%d?phone=%d", i, 79000000000+i))
	}
	assert.Equal(t, before, count())
}

func TestMetricsEndpointServesTheTextFormat(t *testing.T) {
	o := New("t")
	o.AddCheck("database", func(context.Context) error { return nil })
	get(t, engine(o), "/v2/lead/detail/1")
	code, body := get(t, o.Handler(), "/metrics")
	assert.Equal(t, http.StatusOK, code)
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "app_build_info", "app_ready 1", "http_requests_total"} {
		assert.Contains(t, body, name)
	}
}

func TestUnknownPathOfTheOpsListenerIsTheEnvelope404(t *testing.T) {
	code, body := get(t, New("t").Handler(), "/v2/order")
	assert.Equal(t, http.StatusNotFound, code)
	var env web.Envelope
	require.NoError(t, json.Unmarshal([]byte(body), &env))
	assert.False(t, env.Success)
}
