package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
)

const (
	parent      = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
)

func setup(t *testing.T) {
	t.Helper()
	shutdown, err := Setup(context.Background(), "test", "v0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = shutdown(context.Background()) })
}

func TestWithoutExporterIDsPropagateAndRootsAreNotSampled(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	setup(t)
	require.False(t, Exporting())

	// A root: ids are made (logs correlate), nothing is sampled.
	ctx, span := Tracer().Start(context.Background(), "root")
	sc := span.SpanContext()
	require.True(t, sc.IsValid())
	assert.False(t, sc.IsSampled())
	assert.False(t, span.IsRecording())
	assert.Equal(t, sc.TraceID().String(), TraceID(ctx))
	span.End()

	// A child of a caller's sampled context keeps its trace id and its sampling decision.
	ctx = WithTraceparent(context.Background(), parent)
	ctx, span = Tracer().Start(ctx, "child")
	defer span.End()
	assert.Equal(t, parentTrace, TraceID(ctx))
	assert.True(t, span.SpanContext().IsSampled())
	assert.NotEqual(t, "00f067aa0ba902b7", span.SpanContext().SpanID().String())

	h := http.Header{}
	Inject(ctx, propagation.HeaderCarrier(h))
	got := h.Get("traceparent")
	assert.Regexp(t, `^00-`+parentTrace+`-[0-9a-f]{16}-01$`, got)
	assert.Equal(t, got, Traceparent(ctx))
	assert.Equal(t, parentTrace, TraceID(Extract(context.Background(), propagation.HeaderCarrier(h))))
	assert.Empty(t, h.Get("baggage"), "no baggage is propagated")
}

func TestTraceparentOfNothing(t *testing.T) {
	assert.Equal(t, "", Traceparent(context.Background()))
	assert.Equal(t, "", TraceID(context.Background()))
	assert.Nil(t, LogFields(context.Background()))
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-zz-01"} {
		assert.Equal(t, "", TraceID(WithTraceparent(context.Background(), bad)), bad)
	}
}

func TestLogFieldsNameTheTrace(t *testing.T) {
	ctx := WithTraceparent(context.Background(), parent)
	fields := LogFields(ctx)
	require.Len(t, fields, 2)
	assert.Equal(t, zap.String("trace_id", parentTrace), fields[0])
	assert.Equal(t, zap.String("span_id", "00f067aa0ba902b7"), fields[1])
}

// An OTLP/HTTP receiver in the test is the collector's protocol peer: with the endpoint set,
// the spans of a trace arrive there, with the service's name, when the provider shuts down.
func TestExportsOverOTLPWhenTheEndpointIsSet(t *testing.T) {
	got := make(chan *coltrace.ExportTraceServiceRequest, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got <- &req
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	require.True(t, Exporting())

	shutdown, err := Setup(context.Background(), "lead-api", "v1.2.3")
	require.NoError(t, err)
	ctx := WithTraceparent(context.Background(), parent)
	_, span := Tracer().Start(ctx, "POST /v2/lead/create/async", trace.WithSpanKind(trace.SpanKindServer))
	span.End()
	// A root is sampled when exporting (the SDK's default sampler).
	_, root := Tracer().Start(context.Background(), "root")
	assert.True(t, root.SpanContext().IsSampled())
	root.End()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, shutdown(sctx))

	names := map[string]string{}
	var service string
	for {
		select {
		case req := <-got:
			for _, rs := range req.ResourceSpans {
				for _, a := range rs.GetResource().GetAttributes() {
					if a.Key == "service.name" {
						service = a.GetValue().GetStringValue()
					}
				}
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						names[s.Name] = trace.TraceID(s.TraceId).String()
					}
				}
			}
			continue
		default:
		}
		break
	}
	assert.Equal(t, "lead-api", service)
	assert.Equal(t, parentTrace, names["POST /v2/lead/create/async"])
	assert.Contains(t, names, "root")
}
