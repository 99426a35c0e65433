// Package e2e drives the public API through the gateway with every real binary of the platform
// started on free ports against a database made for the run. Nothing is faked: the tests see what
// a client sees.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mqtest"
)

// process is one binary of the stack.
type process struct {
	name string
	pkg  string // package path relative to the repository root
	// health is the path answered 200 once the process is ready; "" for queue consumers, which
	// get no HTTP address.
	health string
	// env adds variables of this process only.
	env []string
}

// processes is the stack in start order. Every HTTP process's base URL is given to every process
// as <NAME>_URL (a "-api" suffix dropped: lead-api → LEAD_URL), as scripts/stack.sh does.
var processes = []process{
	{name: "user", pkg: "./services/user/cmd/user", health: "/internal/health"},
	{name: "order", pkg: "./services/order/cmd/order", health: "/internal/health"},
	{name: "gateway", pkg: "./gateway/cmd/gateway", health: "/livez",
		env: []string{"RATE_LIMIT_RPS=100000", "RATE_LIMIT_BURST=100000", "AUTH_CACHE_TTL=1s"}},
}

// tools are built but not started.
var tools = map[string]string{"ccadmin": "./services/user/cmd/ccadmin"}

// Stack is the running platform.
type Stack struct {
	BaseURL     string
	APIKey      string
	DatabaseURL string
	AMQPURL     string
	// AdminID is the demo admin the key belongs to.
	AdminID int64

	root    string
	binDir  string
	logDir  string
	addrs   map[string]string
	cmds    map[string]*exec.Cmd
	client  *http.Client
	baseEnv []string
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
		s, err := startStack(dbURL, amqpURL)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: start stack:", err)
			if s != nil {
				s.dumpLogs(os.Stderr)
				s.stop()
			}
			return 1
		}
		stack = s
		code := m.Run()
		if code != 0 {
			s.dumpLogs(os.Stderr)
		}
		s.stop()
		return code
	})
}

func startStack(dbURL, amqpURL string) (*Stack, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "cc-e2e-")
	if err != nil {
		return nil, err
	}
	s := &Stack{
		DatabaseURL: dbURL, AMQPURL: amqpURL, root: root,
		binDir: filepath.Join(tmp, "bin"), logDir: filepath.Join(tmp, "logs"),
		addrs: map[string]string{}, cmds: map[string]*exec.Cmd{},
		client: &http.Client{Timeout: 30 * time.Second},
	}
	if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		return nil, err
	}
	if err := s.build(); err != nil {
		return nil, err
	}
	for _, p := range processes {
		if p.health == "" {
			continue
		}
		addr, err := freeAddr()
		if err != nil {
			return s, err
		}
		s.addrs[p.name] = addr
	}
	s.baseEnv = append(os.Environ(), "DATABASE_URL="+dbURL, "AMQP_URL="+amqpURL, "INTERNAL_TOKEN="+internalToken, "LOG_LEVEL=warn")
	for name := range s.addrs {
		s.baseEnv = append(s.baseEnv, strings.ToUpper(strings.TrimSuffix(name, "-api"))+"_URL="+s.URL(name))
	}
	for _, p := range processes {
		if p.name == "gateway" {
			// The gateway is last: demo data and the key exist before the first public request.
			if err := s.seed(); err != nil {
				return s, err
			}
		}
		if err := s.start(p); err != nil {
			return s, err
		}
	}
	s.BaseURL = s.URL("gateway")
	return s, nil
}

// URL is the base URL of a process of the stack.
func (s *Stack) URL(name string) string { return "http://" + s.addrs[name] }

func (s *Stack) build() error {
	targets := map[string]string{}
	for _, p := range processes {
		targets[p.name] = p.pkg
	}
	for n, pkg := range tools {
		targets[n] = pkg
	}
	for name, pkg := range targets {
		cmd := exec.Command("go", "build", "-o", filepath.Join(s.binDir, name), pkg)
		cmd.Dir = s.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", name, err, out)
		}
	}
	return nil
}

func (s *Stack) start(p process) error {
	logf, err := os.OpenFile(filepath.Join(s.logDir, p.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(s.binDir, p.name))
	cmd.Env = append(append([]string{}, s.baseEnv...), p.env...)
	if addr := s.addrs[p.name]; addr != "" {
		cmd.Env = append(cmd.Env, "HTTP_ADDR="+addr)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	s.cmds[p.name] = cmd
	if p.health == "" {
		// A consumer is up once it has survived its start (it reconnects by itself afterwards).
		time.Sleep(300 * time.Millisecond)
		if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
			return fmt.Errorf("%s exited at start", p.name)
		}
		return nil
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.URL(p.name) + p.health)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not become healthy at %s%s", p.name, s.URL(p.name), p.health)
}

// Admin runs ccadmin with the stack's environment and returns its stdout.
func (s *Stack) Admin(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(s.binDir, "ccadmin"), args...)
	cmd.Env = append([]string{}, s.baseEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ccadmin %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

func (s *Stack) seed() error {
	if _, err := s.Admin("seed", "--demo"); err != nil {
		return err
	}
	key, err := s.Admin("apikey", "create", "--email", "admin@demo.callcenter.local", "--name", "e2e")
	if err != nil {
		return err
	}
	s.APIKey = key
	return nil
}

// Restart stops a process and starts it again (same address, same environment).
func (s *Stack) Restart(name string) error {
	s.Stop(name, syscall.SIGTERM)
	return s.Start(name)
}

// Stop ends a process with sig (SIGKILL to simulate a crash), waiting for it to exit.
func (s *Stack) Stop(name string, sig syscall.Signal) { s.kill(name, sig) }

// Start starts a stopped process again.
func (s *Stack) Start(name string) error {
	for _, p := range processes {
		if p.name == name {
			return s.start(p)
		}
	}
	return fmt.Errorf("no process %s", name)
}

func (s *Stack) kill(name string, sig syscall.Signal) {
	cmd := s.cmds[name]
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	delete(s.cmds, name)
}

func (s *Stack) stop() {
	for i := len(processes) - 1; i >= 0; i-- {
		s.kill(processes[i].name, syscall.SIGTERM)
	}
	_ = os.RemoveAll(s.binDir)
}

func (s *Stack) dumpLogs(w io.Writer) {
	entries, _ := os.ReadDir(s.logDir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(s.logDir, e.Name()))
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		fmt.Fprintf(w, "---- %s (tail) ----\n%s\n", e.Name(), b)
	}
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK: %w", err)
	}
	w := strings.TrimSpace(string(out))
	if w == "" || w == "off" {
		return "", fmt.Errorf("e2e tests run inside the workspace (go.work)")
	}
	return filepath.Dir(w), nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
