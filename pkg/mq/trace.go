package mq

import (
	"context"

	"ccplatform/pkg/tracing"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// headerCarrier lets the trace propagator read and write AMQP message headers.
type headerCarrier amqp.Table

func (h headerCarrier) Get(k string) string {
	v, _ := h[k].(string)
	return v
}

func (h headerCarrier) Set(k, v string) { h[k] = v }

func (h headerCarrier) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}

// startPublish opens the producer span of a publish and writes its trace context into headers,
// when ctx carries a trace: a message sent for no traced request or job (a group of many jobs,
// each with its own trace) starts none.
func startPublish(ctx context.Context, exchange, key string, headers amqp.Table) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx, span := tracing.Tracer().Start(ctx, "publish "+exchange+" "+key, trace.WithSpanKind(trace.SpanKindProducer))
	tracing.Inject(ctx, headerCarrier(headers))
	return ctx, span
}

// Traced returns ctx continuing the trace d carries in its headers, in a consumer span the caller
// ends once it handled d; tracing.LogFields(ctx) names the trace on the handler's log lines.
func Traced(ctx context.Context, d Delivery) (context.Context, trace.Span) {
	if d.Headers != nil {
		ctx = tracing.Extract(ctx, headerCarrier(d.Headers))
	}
	return tracing.Tracer().Start(ctx, "process "+d.RoutingKey, trace.WithSpanKind(trace.SpanKindConsumer))
}
