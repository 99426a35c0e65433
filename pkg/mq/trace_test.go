package mq

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/tracing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message published inside a trace carries it in its headers (with the publish's own span as
// the parent), and the consumer's span continues it; one published outside any trace carries none.
func TestTraceTravelsInMessageHeaders(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	shutdown, err := tracing.Setup(context.Background(), "mq-test", "v0")
	require.NoError(t, err)
	defer func() { _ = shutdown(context.Background()) }()

	q := "t.trace"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	traced := tracing.WithTraceparent(ctx, "00-"+trace+"-00f067aa0ba902b7-01")
	require.NoError(t, p.Publish(traced, "", q, msg(1)))
	require.NoError(t, p.Publish(ctx, "", q, msg(2)))

	got := make(chan Delivery, 2)
	cctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Consume(cctx, ConsumerConfig{Queue: q, Tag: "t"}, func(_ context.Context, b []Delivery) []Result {
			for _, d := range b {
				got <- d
			}
			return make([]Result, len(b))
		})
	}()
	byID := map[string]Delivery{}
	for len(byID) < 2 {
		select {
		case d := <-got:
			byID[d.MessageId] = d
		case <-time.After(10 * time.Second):
			t.Fatal("messages not consumed")
		}
	}
	stop()
	<-done

	d := byID["m-1"]
	assert.Regexp(t, `^00-`+trace+`-[0-9a-f]{16}-01$`, d.Headers["traceparent"])
	assert.NotContains(t, d.Headers["traceparent"], "00f067aa0ba902b7", "the publish span is the parent")
	hctx, span := Traced(context.Background(), d)
	assert.Equal(t, trace, tracing.TraceID(hctx))
	span.End()

	d = byID["m-2"]
	assert.NotContains(t, d.Headers, "traceparent")
	hctx, span = Traced(context.Background(), d)
	assert.Regexp(t, `^[0-9a-f]{32}$`, tracing.TraceID(hctx), "an untraced message starts a trace of its own")
	assert.NotEqual(t, trace, tracing.TraceID(hctx))
	span.End()
}
