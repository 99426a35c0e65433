package servicetest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/zap"
)

// Broker is a test's own connection to the vhost, apart from the one of the code under test, so
// that cutting that one leaves the test's publishing and reading alone.
type Broker struct {
	Conn *mq.Conn
	pub  *mq.Publisher
}

// Dial connects to amqpURL and declares topology; it closes when the test ends.
func Dial(t testing.TB, amqpURL string, topology ...mq.Topology) *Broker {
	t.Helper()
	conn := mq.Dial(amqpURL, "servicetest-"+uuid.NewString()[:8], zap.NewNop(), topology...)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := conn.Wait(ctx); err != nil {
		t.Fatalf("broker: %v", err)
	}
	b := &Broker{Conn: conn, pub: mq.NewPublisher(conn)}
	t.Cleanup(func() { b.pub.Close(); conn.Close() })
	return b
}

// PublishRaw puts body on queue (through the default exchange) and waits for the confirm.
func (b *Broker) PublishRaw(t testing.TB, queue, id string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := b.pub.Publish(ctx, "", queue, mq.Message{ID: id, Type: telephony.EventType, Body: body}); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// PublishEvent puts a call event on queue.
func (b *Broker) PublishEvent(t testing.TB, queue string, ev telephony.CallEvent) {
	t.Helper()
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatalf("encode event: %v", err)
	}
	b.PublishRaw(t, queue, ev.EventID, body)
}

// Collector gathers the messages of one queue in the background.
type Collector struct {
	mu   sync.Mutex
	msgs []amqp.Delivery
}

// Collect consumes queue (auto-ack) until the test ends.
func (b *Broker) Collect(t testing.TB, queue string) *Collector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := b.Conn.Channel(ctx)
	if err != nil {
		t.Fatalf("channel: %v", err)
	}
	deliveries, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	c := &Collector{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range deliveries {
			c.mu.Lock()
			c.msgs = append(c.msgs, d)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); _ = ch.Close(); <-done })
	return c
}

// Messages is a copy of what arrived so far.
func (c *Collector) Messages() []amqp.Delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]amqp.Delivery(nil), c.msgs...)
}

// CloseConnections closes, through the management API, every broker connection whose client
// name is name, as a broker restart or a network cut would.
func CloseConnections(t testing.TB, name string) {
	t.Helper()
	base, err := url.Parse(mqtest.BaseURL())
	if err != nil {
		t.Fatalf("AMQP_URL: %v", err)
	}
	pass, _ := base.User.Password()
	client := &http.Client{Timeout: 10 * time.Second}
	type conn struct {
		Name             string `json:"name"`
		ClientProperties struct {
			ConnectionName string `json:"connection_name"`
		} `json:"client_properties"`
	}
	var mine []conn
	// The management API lists connections with the delay of its statistics interval.
	Eventually(t, 15*time.Second, func() bool {
		req, _ := http.NewRequest(http.MethodGet, mqtest.ManagementURL()+"/api/connections", nil)
		req.SetBasicAuth(base.User.Username(), pass)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var all []conn
		if json.NewDecoder(resp.Body).Decode(&all) != nil {
			return false
		}
		mine = mine[:0]
		for _, c := range all {
			if c.ClientProperties.ConnectionName == name {
				mine = append(mine, c)
			}
		}
		return len(mine) > 0
	}, "connection "+name+" never listed")
	for _, c := range mine {
		req, _ := http.NewRequest(http.MethodDelete, mqtest.ManagementURL()+"/api/connections/"+url.PathEscape(c.Name), nil)
		req.SetBasicAuth(base.User.Username(), pass)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("close connection: %v", err)
		}
		resp.Body.Close()
	}
}
