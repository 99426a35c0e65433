package mq

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drain takes every message from q and returns them in order.
func drain(t *testing.T, c *Conn, q string) []Delivery {
	t.Helper()
	ch, err := c.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	var out []Delivery
	for {
		d, ok, err := ch.Get(q, true)
		require.NoError(t, err)
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

func TestDeadLetteringKeepsOnlyWhatTheHandlerSays(t *testing.T) {
	q := "t.group-dead"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, p.Publish(ctx, "", q, Message{ID: "g-1", Type: "test.group", Body: JoinGroup([][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)})}))

	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Consume(ctx, ConsumerConfig{Queue: q, Tag: "t"}, func(_ context.Context, batch []Delivery) []Result {
			out := make([]Result, len(batch))
			for i := range batch {
				out[i] = Result{Outcome: DeadLetter, Reason: "item 2 is bad", Keep: JoinGroup([][]byte{[]byte(`{"n":2}`)})}
			}
			return out
		})
	}()
	var dead []Delivery
	require.Eventually(t, func() bool {
		dead = append(dead, drain(t, c, q+DeadLetterSuffix)...)
		return len(dead) > 0
	}, 10*time.Second, 50*time.Millisecond)
	cancel()
	<-done
	require.Len(t, dead, 1)
	assert.JSONEq(t, `[{"n":2}]`, string(dead[0].Body))
	assert.Equal(t, "g-1", dead[0].MessageId)
	assert.Equal(t, "test.group", dead[0].Type)
	assert.Equal(t, "item 2 is bad", dead[0].Headers["x-dead-letter-reason"])
	assert.Empty(t, drain(t, c, q), "the group itself was acked")
}
