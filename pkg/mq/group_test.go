package mq

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
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

// sendQueued queues n items on g before its lanes start, so what the lanes find is known, then
// starts them and returns every Send's error.
func sendQueued(t *testing.T, g *Group, n int, item func(i int) []byte) []error {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errs[i] = g.Send(ctx, fmt.Sprintf("item-%d", i), item(i))
		}()
	}
	require.Eventually(t, func() bool { return len(g.queue) == n }, 5*time.Second, time.Millisecond)
	g.start()
	wg.Wait()
	return errs
}

func TestGroupCarriesTheItemsQueuedMeanwhileInOneMessage(t *testing.T) {
	q := "t.group"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	g := newGroup(p, GroupConfig{Key: q, Type: "test.group", Lanes: 1, MaxItems: 4})
	defer g.Close()

	errs := sendQueued(t, g, 10, func(i int) []byte { return fmt.Appendf(nil, `{"n":%d}`, i) })
	for _, err := range errs {
		require.NoError(t, err)
	}

	msgs := drain(t, c, q)
	var sizes []int
	var got []int
	for _, d := range msgs {
		assert.Equal(t, "test.group", d.Type)
		assert.Equal(t, uint8(2), d.DeliveryMode, "persistent")
		items, err := SplitGroup(d.Body)
		require.NoError(t, err)
		sizes = append(sizes, len(items))
		for _, it := range items {
			var v struct{ N int }
			require.NoError(t, json.Unmarshal(it, &v))
			got = append(got, v.N)
		}
	}
	assert.Equal(t, []int{4, 4, 2}, sizes, "ten queued items leave as groups of at most MaxItems")
	sort.Ints(got)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got, "every item exactly once")
}

func TestGroupStaysWithinMaxBytes(t *testing.T) {
	q := "t.group-bytes"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	pad := strings.Repeat("x", 90)
	item := func(i int) []byte { return fmt.Appendf(nil, `{"n":%d,"pad":%q}`, i, pad) }
	size := len(item(0)) // every item is as long, one digit each
	g := newGroup(p, GroupConfig{Key: q, Type: "test.group", Lanes: 1, MaxItems: 32, MaxBytes: 3*size + 2})
	defer g.Close()

	for _, err := range sendQueued(t, g, 7, item) {
		require.NoError(t, err)
	}
	var sizes []int
	total := 0
	for _, d := range drain(t, c, q) {
		assert.LessOrEqual(t, len(d.Body), 3*size+4, "the body is the items, their commas and brackets")
		items, err := SplitGroup(d.Body)
		require.NoError(t, err)
		sizes = append(sizes, len(items))
		total += len(items)
	}
	assert.Equal(t, []int{3, 3, 1}, sizes)
	assert.Equal(t, 7, total)
}

func TestGroupSendsALoneItemAtOnce(t *testing.T) {
	q := "t.group-alone"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	g := NewGroup(p, GroupConfig{Key: q, Type: "test.group"})
	defer g.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, g.Send(ctx, "alone", []byte(`{"n":1}`)))
	msgs := drain(t, c, q)
	require.Len(t, msgs, 1, "confirmed means stored")
	assert.Equal(t, "alone", msgs[0].MessageId, "a group is named after its first item")
	assert.JSONEq(t, `[{"n":1}]`, string(msgs[0].Body))
}

func TestGroupRefusesItemsOnceClosed(t *testing.T) {
	q := "t.group-refuse"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	g := NewGroup(p, GroupConfig{Key: q, Type: "test.group"})

	ctx := context.Background()
	g.Close()
	require.ErrorIs(t, g.Send(ctx, "late", []byte(`{}`)), ErrGroupClosed)
	assert.Empty(t, drain(t, c, q))
}

func TestGroupSendGivesUpWithTheContextWhenTheBrokerIsAway(t *testing.T) {
	c := Dial("amqp://guest:guest@127.0.0.1:1/", t.Name(), zap.NewNop())
	defer c.Close()
	p := NewPublisher(c)
	g := NewGroup(p, GroupConfig{Key: "nowhere", Type: "test.group", Timeout: 200 * time.Millisecond})
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.ErrorIs(t, g.Send(ctx, "x", []byte(`{}`)), ErrNotConfirmed)
	assert.Less(t, time.Since(start), 2*time.Second)
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
