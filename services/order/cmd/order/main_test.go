package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/config"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var dbURL, amqpURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "order_main", func(url string) int {
		dbURL = url
		u, drop, err := mqtest.CreateVhost("order_main")
		if err != nil {
			fmt.Fprintln(os.Stderr, "order:", err)
			return 1
		}
		defer func() { _ = drop() }()
		amqpURL = u
		return m.Run()
	})
}

// freeAddr is a local address nothing listens on yet.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// serve runs the service with cfg until the test ends, and waits until it answers.
func serve(t *testing.T, cfg Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, zap.NewNop(), ops.New("order")) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("run did not stop")
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + cfg.HTTPAddr + "/readyz/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond)
}

// post sends body to the service as the gateway would and returns the envelope's data.
func post(t *testing.T, addr, path, body string) json.RawMessage {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Internal-Token", "t")
	req.Header.Set("X-User-Id", "1")
	req.Header.Set("X-Access-Group", "admin")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	require.Equal(t, http.StatusOK, resp.StatusCode, env.Message)
	return env.Data
}

// TestUpdatePublishesOrderUpdated runs the whole service against a broker vhost: an update comes
// out as exactly one order.updated event on a queue the test binds to the events exchange.
func TestUpdatePublishesOrderUpdated(t *testing.T) {
	queue := "order-main.updated"
	conn := mq.Dial(amqpURL, t.Name(), zap.NewNop(), mq.EventExchange("events"), func(ch *amqp.Channel) error {
		if _, err := ch.QueueDeclare(queue, false, true, false, false, nil); err != nil {
			return err
		}
		return ch.QueueBind(queue, "order.updated", "events", false, nil)
	})
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := conn.Channel(ctx)
	require.NoError(t, err)
	defer ch.Close()
	deliveries, err := ch.Consume(queue, "", true, true, false, false, nil)
	require.NoError(t, err)

	addr := freeAddr(t)
	serve(t, Config{
		Common:   config.Common{LogLevel: "error", InternalToken: "t"},
		Database: config.Database{URL: dbURL, MaxConns: 4},
		Broker:   config.Broker{URL: amqpURL},
		HTTPAddr: addr,
		UserURL:  "http://127.0.0.1:1",
	})
	var created struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, json.Unmarshal(post(t, addr, "/v2/order/create",
		`{"serviceTitle":"svc","title":"Events","status":"success","sipEndpointIds":[1]}`), &created))
	post(t, addr, fmt.Sprintf("/v2/order/update/%d", created.ID), `{"title":"Events renamed"}`)

	var d amqp.Delivery
	select {
	case d = <-deliveries:
	case <-time.After(15 * time.Second):
		t.Fatal("no order.updated event")
	}
	var ev struct {
		EventID    string `json:"eventId"`
		Type       string `json:"type"`
		OccurredAt string `json:"occurredAt"`
		OrderID    int64  `json:"orderId"`
	}
	require.NoError(t, json.Unmarshal(d.Body, &ev))
	assert.Equal(t, created.ID, ev.OrderID)
	assert.Equal(t, "order.updated", ev.Type)
	assert.Equal(t, "order.updated", d.Type)
	assert.Equal(t, ev.EventID, d.MessageId)
	assert.Equal(t, "order.updated", d.RoutingKey)
	assert.Equal(t, "events", d.Exchange)
	_, err = time.Parse(time.RFC3339, ev.OccurredAt)
	assert.NoError(t, err, ev.OccurredAt)
	select {
	case extra := <-deliveries:
		t.Fatalf("a second event for one update: %s", extra.Body)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestRunServesAndStops starts the whole service on a free port with the broker down, asks its
// health check, then stops it as a signal would and expects a clean shutdown.
func TestRunServesAndStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	cfg := Config{
		Common:   config.Common{LogLevel: "error", InternalToken: "t"},
		Database: config.Database{URL: dbURL, MaxConns: 4},
		// No broker listens there: the service still starts and serves (its events wait).
		Broker:   config.Broker{URL: "amqp://guest:guest@127.0.0.1:1/"},
		HTTPAddr: addr,
		UserURL:  "http://127.0.0.1:1",
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, zap.NewNop(), ops.New("order")) }()

	var status int
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz/")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		status = resp.StatusCode
		return true
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, http.StatusOK, status)

	resp, err := http.Get("http://" + addr + "/v2/order/detail/1")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "public routes need the internal token")

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop")
	}
}
