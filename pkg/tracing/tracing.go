// Package tracing follows one request or job across processes with OpenTelemetry: W3C trace
// context (`traceparent`, `tracestate`) is taken from incoming HTTP requests and AMQP messages,
// passed on in outgoing ones, and named on log lines as `trace_id`. Spans are exported over OTLP
// only when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; without an
// exporter the ids are still made and propagated, so logs correlate, and nothing is recorded.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// Exporting reports whether the environment asks for spans to be exported over OTLP.
func Exporting() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the process's tracer provider and the W3C trace-context propagator as
// OpenTelemetry's process-wide ones (the API's instrumentation points read them), and returns
// the function that flushes and stops them. Without an exporter, a span is recorded only as ids:
// roots are not sampled and a caller's sampling decision is kept, so a `traceparent` passes
// through unchanged in meaning.
func Setup(ctx context.Context, service, version string) (shutdown func(context.Context) error, err error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", service),
		attribute.String("service.version", version),
	))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if Exporting() {
		// The exporter reads its endpoint, headers, timeout and TLS settings from the standard
		// OTEL_EXPORTER_OTLP_* variables; the sampler from OTEL_TRACES_SAMPLER (default: every
		// root, and a caller's decision for the rest).
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	} else {
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	// Trace context only: the platform reads no baggage, and a client's would otherwise be passed
	// on to every service and message unread.
	otel.SetTextMapPropagator(propagation.TraceContext{})
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) // export errors are the exporter's to retry; they must not spam stderr
	return func(ctx context.Context) error {
		if err := tp.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("tracing: shutdown: %w", err)
		}
		return nil
	}, nil
}

// Tracer is the platform's tracer from the installed provider.
func Tracer() trace.Tracer { return otel.Tracer("ccplatform") }

// Inject writes ctx's trace context into carrier (HTTP headers, AMQP headers).
func Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	otel.GetTextMapPropagator().Inject(ctx, carrier)
}

// Extract returns ctx with the remote trace context carrier holds (none: ctx as it is).
func Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	return otel.GetTextMapPropagator().Extract(ctx, carrier)
}

// TraceID is ctx's trace id in hex, or "" when ctx carries no trace.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}

// LogFields are the fields that tie a log line to ctx's trace: trace_id and span_id, or none.
func LogFields(ctx context.Context) []zap.Field {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return []zap.Field{zap.String("trace_id", sc.TraceID().String()), zap.String("span_id", sc.SpanID().String())}
}

// Traceparent is ctx's trace context as a W3C traceparent value, or "" when it carries none: for
// a job that travels inside a message shared with other jobs, whose headers cannot carry it.
func Traceparent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// WithTraceparent returns ctx continuing the trace of a W3C traceparent value (an invalid or
// empty one: ctx as it is).
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
