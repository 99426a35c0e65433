package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"ccplatform/pkg/logging"
	"ccplatform/pkg/tracing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestTraceContinuesTheCallersTraceAndNamesItInLogs(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	shutdown, err := tracing.Setup(context.Background(), "web-test", "v0")
	require.NoError(t, err)
	defer func() { _ = shutdown(context.Background()) }()

	e, logs := newTestEngine(t, DefaultBodyLimit)
	e.GET("/t/:id", Handle(func(c *gin.Context) (any, error) {
		ctx := c.Request.Context()
		logging.From(ctx, zap.NewNop()).Info("inside")
		return map[string]string{"trace": tracing.TraceID(ctx), "parent": tracing.Traceparent(ctx)}, nil
	}))

	req := get("/t/1")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	_, env := do(t, e, req)
	var got map[string]string
	require.NoError(t, json.Unmarshal(env.Data, &got))
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", got["trace"])
	assert.Regexp(t, `^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$`, got["parent"])
	assert.NotContains(t, got["parent"], "00f067aa0ba902b7", "the service's own span is the parent of what it calls")
	for _, msg := range []string{"inside", "request"} {
		lines := logs.FilterMessage(msg).FilterField(zap.String("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736")).All()
		assert.Len(t, lines, 1, msg)
	}

	// Without a traceparent the service starts a trace of its own.
	_, env = do(t, e, get("/t/2"))
	require.NoError(t, json.Unmarshal(env.Data, &got))
	assert.Regexp(t, `^[0-9a-f]{32}$`, got["trace"])
	assert.NotEqual(t, "4bf92f3577b34da6a3ce929d0e0e4736", got["trace"])
	assert.Len(t, logs.FilterMessage("inside").FilterField(zap.String("trace_id", got["trace"])).All(), 1)

	// Probes are not traced: their lines carry no trace id.
	e.GET("/livez", func(c *gin.Context) { c.Status(http.StatusOK) })
	req = get("/livez")
	req.Header.Set("traceparent", "00-11111111111111111111111111111111-00f067aa0ba902b7-01")
	w := httptest.NewRecorder()
	e.ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, logs.FilterField(zap.String("trace_id", "11111111111111111111111111111111")).All())
}
