package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ccplatform/pkg/tracing"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The upstream sees the gateway's span as its parent, in the client's trace (or in one the gateway
// started); the client's own traceparent never travels as it came.
func TestForwardedTraceContext(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	shutdown, err := tracing.Setup(context.Background(), "gateway-test", "v0")
	require.NoError(t, err)
	defer func() { _ = shutdown(context.Background()) }()

	up := newCountingServer(t, echoHandler)
	p := New(Config{InternalToken: testToken, UpstreamTimeout: time.Second}, zap.NewNop())
	defer p.CloseIdleConnections()
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(web.Trace())
	e.Any("/*path", p.Handler(target(t, up.URL)))
	gw := httptest.NewServer(e)
	defer gw.Close()

	forwarded := func(h http.Header) http.Header {
		res, body := send(t, gw.Client(), newRequest(t, http.MethodGet, gw.URL+"/v2/order/", nil, h))
		require.Equal(t, http.StatusOK, res.StatusCode, string(body))
		var s seen
		require.NoError(t, json.Unmarshal(body, &s))
		return http.Header(s.Header)
	}

	h := forwarded(http.Header{
		"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		"Tracestate":  {"vendor=abc"},
	})
	require.Len(t, h.Values("Traceparent"), 1)
	assert.Regexp(t, `^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$`, h.Get("Traceparent"))
	assert.NotContains(t, h.Get("Traceparent"), "00f067aa0ba902b7")
	assert.Equal(t, []string{"vendor=abc"}, h.Values("Tracestate"), "the trace's state travels with it")

	h = forwarded(http.Header{"Traceparent": {"not-a-traceparent"}, "Tracestate": {"vendor=abc"}})
	require.Len(t, h.Values("Traceparent"), 1)
	assert.Regexp(t, `^00-[0-9a-f]{32}-[0-9a-f]{16}-00$`, h.Get("Traceparent"), "a broken one is replaced by a new trace")
	assert.Empty(t, h.Values("Tracestate"))

	h = forwarded(nil)
	assert.Regexp(t, `^00-[0-9a-f]{32}-[0-9a-f]{16}-00$`, h.Get("Traceparent"))
}
