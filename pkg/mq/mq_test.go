package mq

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/mqtest"

	"github.com/prometheus/client_golang/prometheus"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

var vhostURL string

func TestMain(m *testing.M) {
	u, drop, err := mqtest.CreateVhost("mq")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mqtest:", err)
		os.Exit(1)
	}
	vhostURL = u
	code := m.Run()
	if err := drop(); err != nil {
		fmt.Fprintln(os.Stderr, "mqtest: drop:", err)
	}
	os.Exit(code)
}

func dial(t *testing.T, topo ...Topology) *Conn {
	t.Helper()
	c := Dial(vhostURL, t.Name(), zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), topo...)
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Wait(ctx))
	return c
}

func msg(i int) Message {
	return Message{ID: fmt.Sprintf("m-%d", i), Type: "test", Body: fmt.Appendf(nil, `{"n":%d}`, i)}
}

func TestPublishConfirmedAndConsumedOnce(t *testing.T) {
	q := "t.publish"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()

	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			assert.NoError(t, p.Publish(ctx, "", q, msg(i)))
		}()
	}
	wg.Wait()
	consumers, messages, err := c.QueueConsumers(context.Background(), q)
	require.NoError(t, err)
	assert.Equal(t, 0, consumers)
	assert.Equal(t, n, messages, "every confirmed message is in the queue")

	var mu sync.Mutex
	seen := map[string]int{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Consume(ctx, ConsumerConfig{Queue: q, Workers: 2, BatchSize: 50, Tag: "t"}, func(_ context.Context, b []Delivery) []Result {
			mu.Lock()
			defer mu.Unlock()
			out := make([]Result, len(b))
			for _, d := range b {
				seen[d.MessageId]++
				assert.Equal(t, amqp.Persistent, d.DeliveryMode)
				assert.Equal(t, "application/json", d.ContentType)
			}
			return out
		})
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == n }, 10*time.Second, 20*time.Millisecond)
	cancel()
	<-done
	for id, k := range seen {
		assert.Equal(t, 1, k, id)
	}
	_, messages, err = c.QueueConsumers(context.Background(), q)
	require.NoError(t, err)
	assert.Equal(t, 0, messages, "all acked")
}

func TestRetryHandsTheSameMessagesAgainWithoutLosingThem(t *testing.T) {
	q := "t.retry"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	require.NoError(t, p.Publish(context.Background(), "", q, msg(1)))

	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handled := make(chan struct{})
	go func() {
		_ = c.Consume(ctx, ConsumerConfig{Queue: q, Tag: "r"}, func(_ context.Context, b []Delivery) []Result {
			if calls.Add(1) < 3 {
				return []Result{{Outcome: Retry, Reason: "database down"}}
			}
			close(handled)
			return []Result{{Outcome: Ack}}
		})
	}()
	select {
	case <-handled:
	case <-time.After(10 * time.Second):
		t.Fatal("message never handled")
	}
	assert.Equal(t, int32(3), calls.Load())
}

func TestPoisonMessagesAreDeadLetteredWithTheReason(t *testing.T) {
	q := "t.poison"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	require.NoError(t, p.Publish(context.Background(), "", q, Message{ID: "bad-json", Body: []byte("{not json")}))
	require.NoError(t, p.Publish(context.Background(), "", q, Message{ID: "always-fails", Body: []byte(`{}`)}))

	var failing atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = c.Consume(ctx, ConsumerConfig{Queue: q, MaxAttempts: 3, Tag: "p"}, func(_ context.Context, b []Delivery) []Result {
			out := make([]Result, len(b))
			for i, d := range b {
				if d.MessageId == "bad-json" {
					out[i] = Result{Outcome: DeadLetter, Reason: "undecodable body"}
				} else {
					failing.Add(1)
					out[i] = Result{Outcome: Fail, Reason: "boom"}
				}
			}
			return out
		})
	}()
	ch, err := c.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	got := map[string]string{}
	require.Eventually(t, func() bool {
		d, ok, err := ch.Get(q+DeadLetterSuffix, true)
		require.NoError(t, err)
		if ok {
			got[d.MessageId], _ = d.Headers["x-dead-letter-reason"].(string)
		}
		return len(got) == 2
	}, 15*time.Second, 50*time.Millisecond)
	assert.Equal(t, "undecodable body", got["bad-json"])
	assert.Contains(t, got["always-fails"], "failed 3 times: boom")
	assert.Equal(t, int32(3), failing.Load(), "delivered exactly MaxAttempts times")
}

func TestPublishWaitsForTheBrokerAndGivesUpWithTheContext(t *testing.T) {
	c := Dial("amqp://guest:guest@127.0.0.1:1/", t.Name(), zap.NewNop())
	defer c.Close()
	p := NewPublisher(c)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Publish(ctx, "", "nowhere", msg(1))
	require.ErrorIs(t, err, ErrNotConfirmed)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.False(t, c.Connected())
}

func TestConnectionHealsAfterTheBrokerDropsIt(t *testing.T) {
	q := "t.heal"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	require.NoError(t, p.Publish(context.Background(), "", q, msg(1)))

	// Force-close the connection from the broker's side, as a broker restart would.
	closeConnections(t, t.Name())
	require.Eventually(t, func() bool { return c.Connects() >= 2 }, 20*time.Second, 20*time.Millisecond, "reconnected")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, p.Publish(ctx, "", q, msg(2)), "publishing resumes on the new connection")
	_, messages, err := c.QueueConsumers(ctx, q)
	require.NoError(t, err)
	assert.Equal(t, 2, messages)
}

func TestDeadLetteringIsRecordedFirstAndWaitsForTheRecord(t *testing.T) {
	q := "t.record"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	require.NoError(t, p.Publish(context.Background(), "", q, Message{ID: "never", Body: []byte(`{"job":1}`)}))

	type record struct{ body, reason string }
	var (
		mu       sync.Mutex
		records  []record
		refusals atomic.Int32
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = c.Consume(ctx, ConsumerConfig{Queue: q, MaxAttempts: 2, Tag: "r",
			OnDeadLetter: func(_ context.Context, d Delivery, body []byte, reason string) error {
				// The owner's store is down the first time: the message must stay queued.
				if refusals.Add(1) == 1 {
					return fmt.Errorf("database down")
				}
				mu.Lock()
				defer mu.Unlock()
				records = append(records, record{string(body), reason})
				return nil
			}}, func(_ context.Context, b []Delivery) []Result {
			out := make([]Result, len(b))
			for i := range b {
				out[i] = Result{Outcome: DeadLetter, Reason: "cannot be stored", Keep: []byte(`{"kept":1}`)}
			}
			return out
		})
	}()
	ch, err := c.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	var copyReason string
	require.Eventually(t, func() bool {
		d, ok, err := ch.Get(q+DeadLetterSuffix, true)
		require.NoError(t, err)
		if ok {
			copyReason, _ = d.Headers["x-dead-letter-reason"].(string)
			assert.Equal(t, `{"kept":1}`, string(d.Body))
		}
		return ok
	}, 15*time.Second, 50*time.Millisecond)
	assert.Equal(t, "cannot be stored", copyReason)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []record{{`{"kept":1}`, "cannot be stored"}}, records, "recorded once, with the copy's body and reason")
	assert.Equal(t, int32(2), refusals.Load(), "the refused record was tried again")
}

func TestMessagesThatNeverGotAnOutcomeAreDeadLettered(t *testing.T) {
	q := "t.overdue"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	require.NoError(t, p.Publish(context.Background(), "", q, Message{ID: "crashes-its-consumer", Body: []byte(`{}`)}))

	// A consumer that dies on the message before deciding anything: the broker hands it back with a
	// growing delivery count.
	const maxAttempts = 3
	ch, err := c.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	for range maxAttempts {
		require.Eventually(t, func() bool {
			d, ok, err := ch.Get(q, false)
			require.NoError(t, err)
			if ok {
				require.NoError(t, d.Nack(false, true))
			}
			return ok
		}, 10*time.Second, 20*time.Millisecond)
	}

	var handled atomic.Int32
	recorded := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = c.Consume(ctx, ConsumerConfig{Queue: q, MaxAttempts: maxAttempts, Tag: "o",
			OnDeadLetter: func(_ context.Context, d Delivery, _ []byte, reason string) error {
				recorded <- reason
				return nil
			}}, func(_ context.Context, b []Delivery) []Result {
			handled.Add(int32(len(b)))
			return make([]Result, len(b))
		})
	}()
	select {
	case reason := <-recorded:
		assert.Contains(t, reason, "delivered 4 times without an outcome")
	case <-time.After(15 * time.Second):
		t.Fatal("the overdue message was not dead-lettered")
	}
	require.Eventually(t, func() bool {
		_, ok, err := ch.Get(q+DeadLetterSuffix, true)
		require.NoError(t, err)
		return ok
	}, 10*time.Second, 50*time.Millisecond)
	assert.Zero(t, handled.Load(), "the handler never saw it again")
}

// A consumer retrying one message without end is subscribed and connected, yet stuck: the age of
// the delivery it holds shows it, in DeliveriesFlowing and the metrics, and clears with the ack.
func TestADeliveryHeldPastItsBoundShowsTheConsumerStalled(t *testing.T) {
	q := "t.stalled"
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	defer p.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c.Collectors()...)

	var stuck atomic.Bool
	stuck.Store(true)
	var acked atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Consume(ctx, ConsumerConfig{Queue: q, Tag: "s", MaxUnackedAge: 500 * time.Millisecond}, func(_ context.Context, b []Delivery) []Result {
			out := make([]Result, len(b))
			for i := range out {
				if stuck.Load() {
					out[i] = Result{Outcome: Retry, Reason: "refused, and retried as if transient"}
				} else {
					acked.Add(1)
				}
			}
			return out
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return c.ConsumersReady() == nil && len(c.Subscriptions()) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, c.DeliveriesFlowing(), "nothing held yet")
	assert.Equal(t, 0.5, series(t, reg)["mq_max_unacked_age_seconds{queue=t.stalled}"])

	require.NoError(t, p.Publish(context.Background(), "", q, msg(1)))
	require.Eventually(t, func() bool { return c.DeliveriesFlowing() != nil }, 5*time.Second, 20*time.Millisecond)
	err := c.DeliveriesFlowing()
	assert.ErrorContains(t, err, "stalled: t.stalled: oldest unacked delivery")
	assert.ErrorContains(t, err, "(bound 500ms)")
	assert.Greater(t, series(t, reg)["mq_oldest_unacked_seconds{queue=t.stalled}"], 0.5)

	stuck.Store(false)
	require.Eventually(t, func() bool { return acked.Load() == 1 }, 15*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return c.DeliveriesFlowing() == nil }, 5*time.Second, 10*time.Millisecond, "flowing again once acked")
	assert.Zero(t, series(t, reg)["mq_oldest_unacked_seconds{queue=t.stalled}"])
}
