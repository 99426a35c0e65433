// Package e2e drives the public API through the gateway with every real binary of the platform
// started on free ports against a database made for the run. Nothing is faked: the tests see what
// a client sees.
package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccplatform/gateway/e2e/stacktest"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mqtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// process is one binary of the stack.
type process struct {
	name string
	pkg  string // package path relative to the repository root
	// health is the path answered 200 once the process is ready.
	health string
	// consumer marks a queue consumer, whose address serves probes and metrics only.
	consumer bool
	// env adds variables of this process only.
	env []string
}

// processes is the stack in start order. Every HTTP process's base URL is given to every process
// as <NAME>_URL (a "-api" suffix dropped: lead-api → LEAD_URL), as scripts/stack.sh does.
var processes = []process{
	{name: "user", pkg: "./services/user/cmd/user", health: "/readyz"},
	{name: "agent-events", pkg: "./services/user/cmd/agent-events", health: "/readyz", consumer: true},
	{name: "order", pkg: "./services/order/cmd/order", health: "/readyz"},
	// At info, lead-api and the gateway write their access lines (trace_test.go reads them).
	// A short pause bound, so that import_test.go sees stalled uploads answered in seconds.
	{name: "lead-api", pkg: "./services/lead/cmd/lead-api", health: "/readyz", env: []string{"LOG_LEVEL=info", "IMPORT_STALL_TIMEOUT=3s"}},
	// At debug, lead-worker writes a line per job done (trace_test.go follows a trace into it).
	{name: "lead-worker", pkg: "./services/lead/cmd/lead-worker", health: "/readyz", consumer: true, env: []string{"LOG_LEVEL=debug"}},
	{name: "call", pkg: "./services/call/cmd/call", health: "/readyz"},
	{name: "call-ingest", pkg: "./services/call/cmd/call-ingest", health: "/readyz", consumer: true},
	{name: "notification-api", pkg: "./services/notification/cmd/notification-api", health: "/readyz"},
	{name: "notification-worker", pkg: "./services/notification/cmd/notification-worker", health: "/readyz", consumer: true},
	// The receivers of webhook_test.go listen on 127.0.0.1 over http: allowed here, never by default.
	{name: "webhook-api", pkg: "./services/webhook/cmd/webhook-api", health: "/readyz", env: []string{"WEBHOOK_ALLOW_HTTP=true", "WEBHOOK_ALLOW_PRIVATE=true"}},
	{name: "webhook-dispatcher", pkg: "./services/webhook/cmd/webhook-dispatcher", health: "/readyz", consumer: true,
		env: []string{"WEBHOOK_ALLOW_PRIVATE=true", "WEBHOOK_POLL_INTERVAL=50ms", "WEBHOOK_CLAIM_FOR=20s"}},
	{name: "report", pkg: "./services/report/cmd/report", health: "/readyz"},
	{name: "report-worker", pkg: "./services/report/cmd/report-worker", health: "/readyz", consumer: true},
	{name: "gateway", pkg: "./gateway/cmd/gateway", health: "/readyz",
		// Every test client shares 127.0.0.1: the tests that send unknown keys on purpose must not
		// lock the others out (the limit itself is tested in internal/server).
		env: []string{"LOG_LEVEL=info", "RATE_LIMIT_RPS=100000", "RATE_LIMIT_BURST=100000", "AUTH_FAILURE_BURST=100000"}},
}

// tools are built but not started: user-admin and ccadmin, which load the demo data and make the
// API key before the gateway starts, as scripts/stack.sh does.
var tools = stacktest.OperatorTools()

// Stack is the running platform (gateway/e2e/stacktest runs it) with a client for the public API.
type Stack struct {
	*stacktest.Stack
	client *http.Client
}

const internalToken = "e2e-internal-token"

var stack *Stack

func TestMain(m *testing.M) {
	dbtest.Main(m, "e2e", func(dbURL string) int {
		amqpURL, dropVhost, err := mqtest.CreateVhost("e2e")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		defer func() { _ = dropVhost() }()
		// The third parties notification-worker delivers to run in this process, before the stack.
		p, err := startDeliveryPeers()
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		defer p.close()
		peers = p
		// lead-api reads the dialing queue's time from this file while it exists (dialer_test.go).
		clockDir, err := os.MkdirTemp("", "e2e-clock")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		defer os.RemoveAll(clockDir)
		clockFile = filepath.Join(clockDir, "now")
		for i := range processes {
			switch processes[i].name {
			case "notification-worker":
				processes[i].env = append(processes[i].env, p.workerEnv()...)
			case "lead-api":
				processes[i].env = append(processes[i].env, "CLOCK_FILE="+clockFile)
			}
		}
		if openapiCheck, err = loadSpec(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		s, err := startStack(dbURL, amqpURL)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: start stack:", err)
			if s != nil {
				s.DumpLogs(os.Stderr)
				s.Close()
			}
			return 1
		}
		stack = s
		code := m.Run()
		summary, err := openapiCheck.summary()
		fmt.Println(summary)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			code = 1
		}
		if code != 0 {
			s.DumpLogs(os.Stderr)
		}
		s.Close()
		return code
	})
}

// startStack starts every process of the processes table against the database and the broker
// at the given URLs. On error the returned stack (when not nil) holds the logs so far.
func startStack(dbURL, amqpURL string) (*Stack, error) {
	procs := make([]stacktest.Process, len(processes))
	// The gateway probes every consumer's /readyz (<NAME>_URL: call-ingest → CALL_INGEST_URL), as
	// docker-compose.yml and scripts/stack.sh configure it.
	consumers := map[string]string{}
	for _, p := range processes {
		if p.consumer {
			consumers[strings.ToUpper(strings.ReplaceAll(p.name, "-", "_"))+"_URL"] = p.name
		}
	}
	for i, p := range processes {
		procs[i] = stacktest.Process{Name: p.name, Pkg: p.pkg, Health: p.health, Consumer: p.consumer, Env: p.env}
		if p.name == "gateway" {
			procs[i].Upstreams = consumers
		}
	}
	s, err := stacktest.Start(stacktest.Config{
		DatabaseURL: dbURL, AMQPURL: amqpURL, InternalToken: internalToken,
		Processes: procs, Tools: tools,
	})
	if s == nil {
		return nil, err
	}
	return newStack(s), err
}

// newStack is s with the client of the public API: every request and answer it carries is checked
// against api/openapi.yaml (openapi_test.go).
func newStack(s *stacktest.Stack) *Stack {
	return &Stack{Stack: s, client: &http.Client{Timeout: 30 * time.Second, Transport: openapiCheck.transport(http.DefaultTransport)}}
}

// Response is what a client got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Env    struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

// Data decodes the envelope's data into a generic map (fails the test if data is not an object).
func (r Response) Data(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Env.Data, &m); err != nil {
		t.Fatalf("data is not an object: %s", r.Body)
	}
	return m
}

// Errors is data.errors of a validation failure.
func (r Response) Errors(t testing.TB) map[string]string {
	t.Helper()
	var d struct {
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(r.Env.Data, &d); err != nil {
		t.Fatalf("data has no errors map: %s", r.Body)
	}
	return d.Errors
}

// Option changes a request.
type Option func(*http.Request)

// WithKey sends key as X-Api-Key instead of the stack's key ("" sends none).
func WithKey(key string) Option {
	return func(r *http.Request) {
		if key == "" {
			r.Header.Del("X-Api-Key")
		} else {
			r.Header.Set("X-Api-Key", key)
		}
	}
}

// WithHeader sets a request header.
func WithHeader(k, v string) Option { return func(r *http.Request) { r.Header.Set(k, v) } }

// Call sends a request to the gateway with the stack's key. body may be nil, a string or []byte
// (sent as is), or any value (sent as JSON).
func (s *Stack) Call(t testing.TB, method, path string, body any, opts ...Option) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.BaseURL+path, rd)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", s.APIKey)
	for _, o := range opts {
		o(req)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if err := json.Unmarshal(raw, &r.Env); err != nil {
		t.Fatalf("%s %s: answer is not an envelope (status %d): %s", method, path, resp.StatusCode, raw)
	}
	return r
}

// Do sends req (to the gateway) through the stack's checked client without its timeout (an event
// stream lasts as long as req's context), on behalf of t: a request or answer the description does
// not allow fails t. The caller closes the body.
func (s *Stack) Do(t testing.TB, req *http.Request) (*http.Response, error) {
	t.Helper()
	c := &http.Client{Transport: s.client.Transport}
	return c.Do(req.WithContext(forTest(req.Context(), t)))
}

// CSV gets path with the staff key asking for CSV, and returns its records once the answer is a
// 200 of type text/csv.
func (s *Stack) CSV(t testing.TB, path string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.BaseURL+path, nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", s.APIKey)
	req.Header.Set("Accept", "text/csv")
	res, err := s.Do(t, req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/csv; charset=utf-8", res.Header.Get("Content-Type"))
	records, err := csv.NewReader(res.Body).ReadAll()
	require.NoError(t, err)
	return records
}

// ClientFor is the stack's checked client on behalf of t, for code that takes an *http.Client (the
// generated client, say): a request or answer the description does not allow fails t.
func (s *Stack) ClientFor(t testing.TB) *http.Client {
	return &http.Client{Timeout: s.client.Timeout, Transport: onBehalfOf{t: t, next: s.client.Transport}}
}
