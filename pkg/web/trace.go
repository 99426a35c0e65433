package web

import (
	"ccplatform/pkg/tracing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace continues the trace of the request's `traceparent` (or starts one) in a server span named
// by the route template, for the handlers and RequestContext's logger (which names trace_id).
// Probes and metrics scrapes are left out: they would bury the traces of real work.
func Trace() gin.HandlerFunc {
	tracer := tracing.Tracer()
	return func(c *gin.Context) {
		route := c.FullPath()
		switch route {
		case "/livez", "/readyz", "/metrics":
			c.Next()
			return
		case "":
			route = "unmatched"
		}
		ctx := tracing.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
		ctx, span := tracer.Start(ctx, c.Request.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer))
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		if span.IsRecording() {
			status := c.Writer.Status()
			span.SetAttributes(
				attribute.String("http.request.method", c.Request.Method),
				attribute.String("http.route", route),
				attribute.Int("http.response.status_code", status),
			)
			if status >= 500 {
				span.SetStatus(codes.Error, "")
			}
		}
		span.End()
	}
}
