package live_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/identity"
	"ccplatform/pkg/web"
	"ccplatform/services/report/internal/live"
	"ccplatform/services/report/internal/servicetest"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "report_live", func(e *servicetest.Env) { env = e })
}

// event is one "live" event as a client reads it.
type event struct {
	At     time.Time    `json:"at"`
	Orders []live.Order `json:"orders"`
	read   time.Time
}

// stream is an open live stream; its events arrive on events until it ends (closed).
type stream struct {
	events chan event
	cancel context.CancelFunc
}

// open opens the stream on h as user of group, and reads it until the test ends.
func open(t *testing.T, h http.Handler, user int64, group string) *stream {
	t.Helper()
	srv := httptest.NewServer(h)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v2/report/live/", nil)
	require.NoError(t, err)
	req.Header.Set(web.HeaderInternalToken, servicetest.Token)
	req.Header.Set(identity.HeaderUserID, strconv.FormatInt(user, 10))
	req.Header.Set(identity.HeaderAccessGroup, group)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	s := &stream{events: make(chan event, 100), cancel: cancel}
	go func() {
		defer close(s.events)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && name == "live":
				var e event
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
					panic(err)
				}
				e.read = time.Now()
				s.events <- e
			}
		}
	}()
	t.Cleanup(func() { cancel(); srv.Close() })
	return s
}

// until reads events until one satisfies ok, within wait.
func (s *stream) until(t *testing.T, wait time.Duration, ok func(event) bool, what string) event {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case e, open := <-s.events:
			if !open {
				t.Fatalf("the stream ended before %s", what)
			}
			if ok(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("not within %s: %s", wait, what)
		}
	}
}

func ids(e event) []int64 {
	out := []int64{}
	for _, o := range e.Orders {
		out = append(out, o.OrderID)
	}
	return out
}

func orderOf(e event, id int64) *live.Order {
	for i := range e.Orders {
		if e.Orders[i].OrderID == id {
			return &e.Orders[i]
		}
	}
	return nil
}

// The stream shows the orders being worked (named by the latest order of an agent who is not
// offline), each with the lead service's agents and dialing; staff see every one, a client its
// own, an agent itself alone without the dialing figures. A change is pushed at the next tick, and
// an unchanged view is sent again every heartbeat.
func TestTheLiveStreamShowsTheOrdersBeingWorkedToWhoMaySeeThem(t *testing.T) {
	pub := env.Consume(t)
	base := 1_000_000 + rand.Int64N(1_000_000_000)
	agentA, agentB, agentC := base, base+1, base+2
	o1, o2, o3 := base+10, base+11, base+12
	client := base + 20
	now := time.Now().UTC().Truncate(time.Second)
	publish := func(user int64, state string, order int64, at time.Time) {
		pub.Publish(t, "agent.state.changed", "agent.state.changed", servicetest.AgentState(uuid.NewString(), user, state, "", order, at))
	}
	publish(agentA, "on-call", o1, now.Add(-time.Minute))
	// B's call of o2 ended; B is available again, which names no order: B still works o2.
	publish(agentB, "on-call", o2, now.Add(-3*time.Minute))
	publish(agentB, "available", 0, now.Add(-2*time.Minute))
	// C left o3.
	publish(agentC, "on-call", o3, now.Add(-3*time.Minute))
	publish(agentC, "offline", 0, now.Add(-2*time.Minute))

	since := now.Add(-time.Minute)
	one := servicetest.Dialed{OrderID: o1, Agents: []live.Agent{{UserID: agentA, State: "on-call", Since: since, OrderID: &o1},
		{UserID: base + 3, State: "available", Since: since}},
		Dialing: live.Dialing{CallsInFlight: 2, DialLevel: 1.5, AnswerRate15m: 0.4, AbandonRate15m: 0.02, AbandonWindow: "30d", AbandonRateWindow: 0.01, MaxAbandonRate: 0.03}}
	env.Peers.SetDialing(one)
	env.Peers.SetDialing(servicetest.Dialed{OrderID: o2, Agents: []live.Agent{{UserID: agentB, State: "available", Since: since}}})
	env.Peers.SetDialing(servicetest.Dialed{OrderID: o3, Agents: []live.Agent{}})
	env.Peers.SetOrders(client, o1, o3)

	mine := func(e event) []int64 {
		out := []int64{}
		for _, id := range ids(e) {
			if id == o1 || id == o2 || id == o3 {
				out = append(out, id)
			}
		}
		return out
	}
	staff := open(t, env.Handler, 1, "admin")
	// The states are counted as report-worker consumes them: a snapshot taken in between may show
	// o3 still worked; once every state is in, o3 is nobody's any more.
	first := staff.until(t, 15*time.Second, func(e event) bool { return slices.Equal(mine(e), []int64{o1, o2}) },
		"o1 and o2 on the staff's stream, o3 no more")
	got := orderOf(first, o1)
	assert.Equal(t, one.Dialing, *got.Dialing)
	assert.Equal(t, map[string]int64{"on-call": 1, "available": 1}, got.AgentsByState)
	require.Len(t, got.Agents, 2)
	assert.Equal(t, agentA, got.Agents[0].UserID)
	assert.True(t, since.Equal(got.Agents[0].Since), "since when the agent is on the call")
	assert.WithinDuration(t, time.Now(), first.At, 5*time.Second)

	own := open(t, env.Handler, client, "client")
	e := own.until(t, 5*time.Second, func(e event) bool { return len(e.Orders) > 0 }, "the client's order")
	assert.Equal(t, []int64{o1}, ids(e), "the client's o1 only (its o3 is not worked)")

	self := open(t, env.Handler, agentA, "call-center")
	e = self.until(t, 5*time.Second, func(e event) bool { return len(e.Orders) > 0 }, "the agent itself")
	require.Equal(t, []int64{o1}, ids(e))
	assert.Nil(t, e.Orders[0].Dialing, "an agent sees no dialing figures")
	require.Len(t, e.Orders[0].Agents, 1, "an agent sees only itself")
	assert.Equal(t, agentA, e.Orders[0].Agents[0].UserID)

	// A changes state: pushed at the next tick, not at the heartbeat.
	changed := one
	changed.Agents = []live.Agent{{UserID: agentA, State: "wrap-up", Since: now, OrderID: &o1}, one.Agents[1]}
	env.Peers.SetDialing(changed)
	start := time.Now()
	e = self.until(t, 5*time.Second, func(e event) bool { return len(e.Orders) == 1 && e.Orders[0].Agents[0].State == "wrap-up" }, "the agent in wrap-up")
	assert.Less(t, e.read.Sub(start), servicetest.LiveHeartbeat, "the change comes before the heartbeat would")
	staff.until(t, 5*time.Second, func(e event) bool {
		o := orderOf(e, o1)
		return o != nil && o.AgentsByState["wrap-up"] == 1
	}, "the staff see it too")

	// Nothing changes for the agent now: the same view again every heartbeat, and nothing between.
	last := self.until(t, 5*time.Second, func(event) bool { return true }, "the heartbeat")
	again := self.until(t, 5*time.Second, func(event) bool { return true }, "the next heartbeat")
	assert.Equal(t, last.Orders, again.Orders)
	assert.GreaterOrEqual(t, again.read.Sub(last.read), servicetest.LiveHeartbeat*8/10, "unchanged: only the heartbeat")
}

// Closing the hub (the server shutting down) ends every open stream at once.
func TestClosingTheHubEndsTheStreams(t *testing.T) {
	at := time.Now()
	hub := live.NewHub(func(context.Context) (*live.Snapshot, error) {
		return live.NewSnapshot(at, []live.Order{{OrderID: 7, Agents: []live.Agent{{UserID: 5, State: "available", Since: at}}}}), nil
	}, 10*time.Millisecond, zap.NewNop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = hub.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	gin.SetMode(gin.TestMode)
	e := gin.New()
	live.NewHandler(hub, nil, time.Hour).Routes(e)
	s := open(t, web.TrimTrailingSlash(e), 5, "call-center")
	s.until(t, 5*time.Second, func(e event) bool { return len(e.Orders) == 1 }, "the first event")

	hub.Close()
	deadline := time.After(2 * time.Second)
	for {
		select {
		case _, open := <-s.events:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the stream is still open 2 s after the hub closed")
		}
	}
}
