package health

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var amqpURL string

func TestMain(m *testing.M) {
	u, drop, err := mqtest.CreateVhost("gateway-health")
	if err != nil {
		fmt.Fprintln(os.Stderr, "health:", err)
		os.Exit(1)
	}
	amqpURL = u
	code := m.Run()
	_ = drop()
	os.Exit(code)
}

type answer struct {
	Success bool              `json:"success"`
	Message string            `json:"message"`
	Data    map[string]Status `json:"data"`
}

// ask runs the health check handler once and reports the answer and how long it took.
func ask(t *testing.T, c *Checker) (int, answer, time.Duration) {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.GET("/v1/health/check", c.Handler())
	rec := httptest.NewRecorder()
	start := time.Now()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/health/check", nil))
	took := time.Since(start)
	var a answer
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &a), rec.Body.String())
	return rec.Code, a, took
}

// service stands in for a service's /readyz answering status after delay.
func service(t *testing.T, status int, delay time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status == http.StatusOK {
			_, _ = io.WriteString(w, `{"success":true,"message":"","data":{"database":"ok"}}`)
		} else {
			_, _ = io.WriteString(w, `{"success":false,"message":"database: unreachable","data":[]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// dial connects to the test vhost with queues declared, waiting until connected.
func dial(t *testing.T, url string, queues ...string) *mq.Conn {
	t.Helper()
	var topo []mq.Topology
	for _, q := range queues {
		topo = append(topo, mq.WorkQueue(q))
	}
	conn := mq.Dial(url, "health-test", zap.NewNop(), topo...)
	t.Cleanup(conn.Close)
	return conn
}

// consume keeps n consumers on queue until the test ends.
func consume(t *testing.T, conn *mq.Conn, queue string, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = conn.Consume(ctx, mq.ConsumerConfig{Queue: queue, Workers: n, Tag: "health-test"}, func(_ context.Context, b []mq.Delivery) []mq.Result {
			return make([]mq.Result, len(b))
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool {
		c, _, err := conn.QueueConsumers(context.Background(), queue)
		return err == nil && c == n
	}, 5*time.Second, 20*time.Millisecond)
}

func TestAllUp(t *testing.T) {
	conn := dial(t, amqpURL, "health.jobs", "health.calls")
	consume(t, conn, "health.jobs", 1)
	consume(t, conn, "health.calls", 2)
	client := NewHTTPClient()
	platform := service(t, http.StatusOK, 0) + "/readyz"
	c := NewChecker(0,
		Gateway(),
		Service("serviceOrder", service(t, http.StatusOK, 0), client),
		Service("serviceNotification", service(t, http.StatusOK, 0), client),
		Broker(conn),
		QueueHub(conn, []Need{{"health.jobs", 1}, {"health.calls", 2}}),
		Platform(KeyTelephony, platform, client),
		Platform(KeyVoice, "", client),
	)
	status, a, _ := ask(t, c)
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, a.Success)
	assert.Equal(t, "", a.Message)
	keys := []string{KeyGateway, "serviceOrder", "serviceNotification", KeyBroker, KeyQueueHub, KeyTelephony, KeyVoice}
	assert.Len(t, a.Data, len(keys))
	for _, k := range keys {
		assert.True(t, a.Data[k].Success, k)
		assert.GreaterOrEqual(t, a.Data[k].Data.ExecutionTime, 0.0, k)
	}
	assert.Equal(t, "OK", a.Data["serviceOrder"].Data.ReasonPhrase)
	assert.Equal(t, Status{Success: true, Message: "not configured", Data: Diagnostics{ExecutionTime: a.Data[KeyVoice].Data.ExecutionTime}}, a.Data[KeyVoice])
	assert.Equal(t, []QueueStatus{
		{QueueName: "health.jobs", Success: true, Data: QueueCounts{Current: 1, Needle: 1}},
		{QueueName: "health.calls", Success: true, Data: QueueCounts{Current: 2, Needle: 2}},
	}, a.Data[KeyQueueHub].Data.Consumers)
}

func TestTheWireShapeOfAComponent(t *testing.T) {
	conn := dial(t, amqpURL, "health.shape")
	require.Eventually(t, conn.Connected, 5*time.Second, 10*time.Millisecond)
	r := NewChecker(0, QueueHub(conn, []Need{{"health.shape", 1}})).Check(context.Background())
	raw, err := json.Marshal(r.Components)
	require.NoError(t, err)
	var generic map[string]map[string]any
	require.NoError(t, json.Unmarshal(raw, &generic))
	hub := generic[KeyQueueHub]
	assert.Equal(t, false, hub["success"])
	assert.Equal(t, "health.shape: 0 of 1 consumers", hub["message"])
	data := hub["data"].(map[string]any)
	assert.Contains(t, data, "executionTime")
	assert.Equal(t, []any{map[string]any{
		"queue_name": "health.shape", "success": false,
		"data": map[string]any{"current_consumers_count": float64(0), "needle_consumers_count": float64(1)},
	}}, data["consumers"])
}

func TestQueueBelowItsNeedFailsTheCheck(t *testing.T) {
	conn := dial(t, amqpURL, "health.few")
	consume(t, conn, "health.few", 1)
	c := NewChecker(0, Gateway(), Broker(conn), QueueHub(conn, []Need{{"health.few", 2}, {"health.never-declared", 1}}))
	status, a, _ := ask(t, c)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.False(t, a.Success)
	assert.Equal(t, "unavailable: serviceMicroMqHub", a.Message)
	assert.True(t, a.Data[KeyBroker].Success)
	hub := a.Data[KeyQueueHub]
	assert.False(t, hub.Success)
	assert.Equal(t, "health.few: 1 of 2 consumers; health.never-declared: not declared", hub.Message)
	assert.Equal(t, []QueueStatus{
		{QueueName: "health.few", Success: false, Data: QueueCounts{Current: 1, Needle: 2}},
		{QueueName: "health.never-declared", Success: false, Data: QueueCounts{Current: 0, Needle: 1}},
	}, hub.Data.Consumers)
}

func TestBrokerUnreachableStillAnswersFast(t *testing.T) {
	conn := dial(t, "amqp://guest:guest@"+closedAddr(t)+"/")
	client := NewHTTPClient()
	c := NewChecker(0, Gateway(), Service("serviceUser", service(t, http.StatusOK, 0), client),
		Broker(conn), QueueHub(conn, []Need{{"lead.jobs", 1}, {"notification.commands", 1}}))
	status, a, took := ask(t, c)
	assert.Less(t, took, time.Second)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "unavailable: serviceMicroRabbit, serviceMicroMqHub", a.Message)
	assert.Equal(t, "not connected", a.Data[KeyBroker].Message)
	assert.False(t, a.Data[KeyBroker].Success)
	assert.True(t, a.Data["serviceUser"].Success, "the rest is still reported")
	assert.True(t, a.Data[KeyGateway].Success)
	for _, q := range a.Data[KeyQueueHub].Data.Consumers {
		assert.False(t, q.Success, q.QueueName)
		assert.Equal(t, 0, q.Data.Current)
	}
}

func TestSlowAndFailedServices(t *testing.T) {
	client := NewHTTPClient()
	c := NewChecker(0,
		Service("serviceLead", service(t, http.StatusOK, 3*time.Second), client),
		Service("serviceCall", service(t, http.StatusServiceUnavailable, 0), client),
		Service("serviceOrder", "http://"+closedAddr(t), client),
		Platform(KeyTelephony, "http://"+closedAddr(t)+"/ping", client),
		Platform(KeyVoice, service(t, http.StatusOK, 0)+"/nope", client),
	)
	status, a, took := ask(t, c)
	assert.Less(t, took, time.Second, "a hanging service is cut off")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "unavailable: serviceLead, serviceCall, serviceOrder, telephonyPlatform, voicePlatform", a.Message)
	assert.Equal(t, "timed out", a.Data["serviceLead"].Message)
	assert.InDelta(t, 0.3, a.Data["serviceLead"].Data.ExecutionTime, 0.15)
	assert.Equal(t, "status 503: database: unreachable", a.Data["serviceCall"].Message)
	assert.Equal(t, "Service Unavailable", a.Data["serviceCall"].Data.ReasonPhrase)
	assert.Equal(t, "unreachable", a.Data["serviceOrder"].Message)
	assert.Equal(t, "unreachable", a.Data[KeyTelephony].Message)
	assert.Equal(t, "status 404", a.Data[KeyVoice].Message)
	assert.Equal(t, "Not Found", a.Data[KeyVoice].Data.ReasonPhrase)
}

func TestAProbeIgnoringItsContextIsCutOff(t *testing.T) {
	stuck := Probe{Key: "stuck", Check: func(context.Context) Status { time.Sleep(2 * time.Second); return Up("late") }}
	start := time.Now()
	r := NewChecker(100*time.Millisecond, stuck, Gateway()).Check(context.Background())
	assert.Less(t, time.Since(start), time.Second)
	assert.Equal(t, []string{"stuck"}, r.Failed)
	assert.Equal(t, "no answer within 100ms", r.Components["stuck"].Message)
}

func TestParseNeeds(t *testing.T) {
	needs, err := ParseNeeds(" lead.jobs:1, telephony.calls:3 ,notification.commands:1,")
	require.NoError(t, err)
	assert.Equal(t, []Need{{"lead.jobs", 1}, {"telephony.calls", 3}, {"notification.commands", 1}}, needs)
	needs, err = ParseNeeds("")
	require.NoError(t, err)
	assert.Empty(t, needs)
	for _, bad := range []string{"lead.jobs", "lead.jobs:0", "lead.jobs:x", ":1", "a:1,a:2"} {
		_, err := ParseNeeds(bad)
		assert.Error(t, err, bad)
		assert.True(t, strings.HasPrefix(err.Error(), "QUEUE_CONSUMERS"), bad)
	}
}

func TestServiceKey(t *testing.T) {
	assert.Equal(t, "serviceOrder", ServiceKey("order"))
	assert.Equal(t, "serviceNotification", ServiceKey("notification"))
}

// A consumer retrying one delivery without end stays subscribed, so the queue hub counts it as
// up; its own /readyz (pkg/ops over its broker connection) knows it is stuck, and the consumer's
// component says so.
func TestAConsumerStuckOnADeliveryIsDegraded(t *testing.T) {
	const queue = "health.stuck"
	conn := dial(t, amqpURL, queue)
	stuck := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = conn.Consume(ctx, mq.ConsumerConfig{Queue: queue, Tag: "health-test", MaxUnackedAge: 300 * time.Millisecond},
			func(_ context.Context, b []mq.Delivery) []mq.Result {
				out := make([]mq.Result, len(b))
				for i := range out {
					out[i] = mq.Result{Outcome: mq.Retry, Reason: "refused, retried as if transient"}
				}
				select {
				case <-stuck:
				default:
					close(stuck)
				}
				return out
			})
	}()
	t.Cleanup(func() { cancel(); <-done })
	o := ops.New("call-ingest")
	o.Broker(conn)
	probes := httptest.NewServer(o.Handler())
	t.Cleanup(probes.Close)
	c := NewChecker(time.Second, Consumer("call-ingest", probes.URL, NewHTTPClient()), QueueHub(conn, []Need{{queue, 1}}))

	require.Eventually(t, func() bool {
		status, _, _ := ask(t, c)
		return status == http.StatusOK
	}, 5*time.Second, 20*time.Millisecond, "up while it holds nothing")

	pub := mq.NewPublisher(conn)
	t.Cleanup(pub.Close)
	require.NoError(t, pub.Publish(context.Background(), "", queue, mq.Message{ID: "poison", Type: "test", Body: []byte("{}")}))
	<-stuck
	var a answer
	require.Eventually(t, func() bool {
		var status int
		status, a, _ = ask(t, c)
		return status == http.StatusServiceUnavailable
	}, 5*time.Second, 50*time.Millisecond, "degraded once the delivery is held past its bound")
	assert.Equal(t, "unavailable: consumerCallIngest", a.Message)
	got := a.Data["consumerCallIngest"]
	assert.False(t, got.Success)
	assert.Contains(t, got.Message, "status 503: degraded: deliveries: stalled: health.stuck: oldest unacked delivery")
	assert.True(t, a.Data[KeyQueueHub].Success, "the broker still counts its consumer")
}

func TestConsumerKey(t *testing.T) {
	assert.Equal(t, "consumerCallIngest", ConsumerKey("call-ingest"))
	assert.Equal(t, "consumerLeadWorker", ConsumerKey("lead-worker"))
	assert.Equal(t, "consumerWebhookDispatcher", ConsumerKey("webhook-dispatcher"))
}
