package orders

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/svcclient"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var amqpURL string

func TestMain(m *testing.M) {
	u, drop, err := mqtest.CreateVhost("lead-orders")
	if err != nil {
		fmt.Fprintln(os.Stderr, "orders:", err)
		os.Exit(1)
	}
	amqpURL = u
	code := m.Run()
	_ = drop()
	os.Exit(code)
}

// unreachable is a directory whose order service is down: only cached orders are known.
func unreachable() *Directory {
	return NewDirectory(svcclient.New("order", "http://127.0.0.1:1", "t", time.Second), time.Minute)
}

func TestCacheAnswersWithoutTheOrderService(t *testing.T) {
	d := unreachable()
	d.Remember(Order{ID: 1, Code: "one"})
	o, err := d.Check(context.Background(), 1, "one")
	require.NoError(t, err)
	assert.Equal(t, "one", o.Code)

	_, err = d.Check(context.Background(), 2, "two")
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err), "an unknown order must be asked of the service")

	// A code that differs from the cached one is asked again before it is refused.
	_, err = d.Check(context.Background(), 1, "uno")
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err))
}

func TestCacheExpiresAndForgets(t *testing.T) {
	d := unreachable()
	now := time.Now()
	d.now = func() time.Time { return now }
	d.Remember(Order{ID: 1, Code: "one"})
	d.Remember(Order{ID: 2, Code: "two"})
	_, err := d.Get(context.Background(), 1)
	require.NoError(t, err)
	now = now.Add(2 * time.Minute)
	_, err = d.Get(context.Background(), 1)
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err), "expired after the TTL")

	d.now = time.Now
	d.Remember(Order{ID: 1, Code: "one"})
	d.Remember(Order{ID: 2, Code: "two"})
	d.Drop(1)
	assert.Equal(t, 1, d.Len())
	d.Clear()
	assert.Equal(t, 0, d.Len())
}

func TestOrderUpdatedEventsDropCachedOrders(t *testing.T) {
	d := unreachable()
	d.Remember(Order{ID: 7, Code: "seven"})
	inval := NewInvalidation(d, "test", zap.NewNop())
	conn := mq.Dial(amqpURL, "orders-test", zap.NewNop(), inval.Topology())
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, conn.Wait(ctx))
	assert.Equal(t, 0, d.Len(), "a (re)connect drops the whole cache")

	done := make(chan struct{})
	go func() { defer close(done); _ = inval.Run(ctx, conn) }()
	require.Eventually(t, func() bool {
		n, _, err := conn.QueueConsumers(ctx, inval.Queue())
		return err == nil && n == 1
	}, 10*time.Second, 20*time.Millisecond)

	d.Remember(Order{ID: 7, Code: "seven"})
	d.Remember(Order{ID: 8, Code: "eight"})
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	require.NoError(t, pub.Publish(ctx, EventsExchange, UpdatedKey, mq.Message{ID: "e1", Type: UpdatedKey, Body: []byte(`{"eventId":"e1","type":"order.updated","orderId":7}`)}))
	require.Eventually(t, func() bool { return d.Len() == 1 }, 10*time.Second, 20*time.Millisecond)
	_, err := d.Get(ctx, 8)
	assert.NoError(t, err, "other orders stay")

	// An event that names no order drops everything.
	require.NoError(t, pub.Publish(ctx, EventsExchange, UpdatedKey, mq.Message{ID: "e2", Body: []byte(`nonsense`)}))
	require.Eventually(t, func() bool { return d.Len() == 0 }, 10*time.Second, 20*time.Millisecond)
	cancel()
	<-done
}
