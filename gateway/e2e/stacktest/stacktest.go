// Package stacktest builds the platform's binaries and runs them as one stack on free local ports,
// against a database and a broker the caller provides: the end-to-end tests and the benchmarks
// start exactly the same processes, with the same environment, as scripts/stack.sh does.
package stacktest

import (
	"bytes"
	"ccplatform/pkg/freeport"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Process is one binary of the stack.
type Process struct {
	Name string
	// Pkg is the main package's path relative to the repository root.
	Pkg string
	// Health is the path answered 200 once the process is ready (/readyz); "" when it is not
	// waited for beyond surviving its start.
	Health string
	// Consumer marks a queue consumer: its HTTP address serves probes and metrics only (its
	// <NAME>_URL is for the gateway's health check).
	Consumer bool
	// Env adds variables of this process only.
	Env []string
	// Tags, when set, builds this process's binary on its own with these build tags, under the
	// process's name (a variant of a binary beside the ordinary one, for measurements).
	Tags string
	// Upstreams points variables of this process at other processes of the stack (variable →
	// process name, whose base URL it gets), over the <NAME>_URL every process gets: a variant
	// that must call another variant.
	Upstreams map[string]string
}

// Config is what a stack runs and against what.
type Config struct {
	DatabaseURL   string
	AMQPURL       string
	InternalToken string
	// Processes is the stack in start order. Every HTTP process's base URL is given to every
	// process as <NAME>_URL (a "-api" suffix dropped: lead-api → LEAD_URL). The process named
	// "gateway" starts after the demo data and the API key were made with the "user-admin" and
	// "ccadmin" tools (OperatorTools).
	Processes []Process
	// Tools are built but not started (name → package).
	Tools map[string]string
	// BinDir is where the binaries are built; empty means a temporary folder removed by Close.
	// Stacks that share one skip the rebuild.
	BinDir string
	// LogLevel of every process; "warn" when empty.
	LogLevel string
}

// Stack is the running platform.
type Stack struct {
	BaseURL     string
	APIKey      string
	DatabaseURL string
	AMQPURL     string

	cfg     Config
	root    string
	binDir  string
	ownBin  bool
	logDir  string
	addrs   map[string]string
	cmds    map[string]*exec.Cmd
	baseEnv []string
	// urlNames are the processes exported as <NAME>_URL; metricsAddrs the gateways' metrics
	// listeners.
	urlNames     []string
	metricsAddrs map[string]string
}

// Start builds every binary and starts every process, each waited for until healthy. On error the
// returned stack (when not nil) holds the logs so far; Close it.
func Start(cfg Config) (*Stack, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "cc-stack-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "warn"
	}
	s := &Stack{
		DatabaseURL: cfg.DatabaseURL, AMQPURL: cfg.AMQPURL, cfg: cfg, root: root,
		binDir: cfg.BinDir, logDir: filepath.Join(tmp, "logs"),
		addrs: map[string]string{}, metricsAddrs: map[string]string{}, cmds: map[string]*exec.Cmd{},
	}
	if s.binDir == "" {
		s.binDir, s.ownBin = filepath.Join(tmp, "bin"), true
	}
	if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		return nil, fmt.Errorf("log dir: %w", err)
	}
	if err := s.build(); err != nil {
		return s, err
	}
	// Every process gets an address of its own, whether it is waited on or not: a binary's default
	// one could be taken by a stack running beside this one.
	for _, p := range cfg.Processes {
		addr, err := freeport.Addr()
		if err != nil {
			return s, err
		}
		s.addrs[p.Name] = addr
		if p.Health != "" {
			s.urlNames = append(s.urlNames, p.Name)
		}
		// The gateway's metrics listener (other binaries ignore the variable): a port of its own
		// per process, so that stacks side by side never share one.
		if s.metricsAddrs[p.Name], err = freeport.Addr(); err != nil {
			return s, err
		}
	}
	s.baseEnv = append(os.Environ(), "DATABASE_URL="+cfg.DatabaseURL, "AMQP_URL="+cfg.AMQPURL,
		"INTERNAL_TOKEN="+cfg.InternalToken, "LOG_LEVEL="+cfg.LogLevel)
	for _, name := range s.urlNames {
		s.baseEnv = append(s.baseEnv, URLVar(name)+"="+s.URL(name))
	}
	for _, p := range cfg.Processes {
		if p.Name == "gateway" {
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

// PID is the process id of a running process of the stack, 0 when it is not running.
func (s *Stack) PID(name string) int {
	if cmd := s.cmds[name]; cmd != nil && cmd.Process != nil && cmd.ProcessState == nil {
		return cmd.Process.Pid
	}
	return 0
}

// MetricsURL is the base URL of a gateway process's private metrics listener.
func (s *Stack) MetricsURL(name string) string { return "http://" + s.metricsAddrs[name] }

// LogDir holds one log file per process.
func (s *Stack) LogDir() string { return s.logDir }

// BuildTags are the build tags of every binary, as scripts/stack.sh and the image build them:
// nomsgpack leaves gin's MessagePack codec (unused: every body is JSON) out of the binary, about
// 10 MB of it and 2 MiB of resident memory per process (docs/performance.md, figure (8)).
const BuildTags = "nomsgpack"

// buildEnv builds without cgo, like the image: nothing needs it, and a binary linked to libc maps
// libc too (1.5 MiB resident per process).
func buildEnv() []string { return append(os.Environ(), "CGO_ENABLED=0") }

// build compiles every binary with one go command (packages build in parallel and share the
// cache), into BinDir under each package's last path element.
func (s *Stack) build() error {
	pkgs := make([]string, 0, len(s.cfg.Processes)+len(s.cfg.Tools))
	var tagged []Process
	for _, p := range s.cfg.Processes {
		if p.Tags != "" {
			tagged = append(tagged, p)
			continue
		}
		pkgs = append(pkgs, p.Pkg)
	}
	for _, pkg := range s.cfg.Tools {
		pkgs = append(pkgs, pkg)
	}
	if err := os.MkdirAll(s.binDir, 0o755); err != nil {
		return fmt.Errorf("bin dir: %w", err)
	}
	cmd := exec.Command("go", append([]string{"build", "-tags", BuildTags, "-o", s.binDir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir, cmd.Env = s.root, buildEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	for _, p := range tagged {
		cmd := exec.Command("go", "build", "-tags", BuildTags+","+p.Tags, "-o", s.binary(p), p.Pkg)
		cmd.Dir, cmd.Env = s.root, buildEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s -tags %s: %w\n%s", p.Pkg, p.Tags, err, out)
		}
	}
	return nil
}

// binary is where p's binary is built: named after its package, or after the process when it
// is a tagged variant.
func (s *Stack) binary(p Process) string {
	if p.Tags != "" {
		return filepath.Join(s.binDir, p.Name)
	}
	return filepath.Join(s.binDir, path.Base(p.Pkg))
}

func (s *Stack) start(p Process) error {
	logf, err := os.OpenFile(filepath.Join(s.logDir, p.Name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("log of %s: %w", p.Name, err)
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := exec.Command(s.binary(p))
	cmd.Env = append(append([]string{}, s.baseEnv...), p.Env...)
	for k, name := range p.Upstreams {
		if s.addrs[name] == "" {
			return fmt.Errorf("%s: %s names %q, which is not a process of the stack", p.Name, k, name)
		}
		cmd.Env = append(cmd.Env, k+"="+s.URL(name))
	}
	if addr := s.addrs[p.Name]; addr != "" {
		cmd.Env = append(cmd.Env, "HTTP_ADDR="+addr, "METRICS_ADDR="+s.metricsAddrs[p.Name])
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	s.cmds[p.Name] = cmd
	if p.Health == "" {
		// A consumer is up once it has survived its start (it reconnects by itself afterwards).
		time.Sleep(300 * time.Millisecond)
		if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
			return fmt.Errorf("%s exited at start", p.Name)
		}
		return nil
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.URL(p.Name) + p.Health)
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
	return fmt.Errorf("%s did not become healthy at %s%s", p.Name, s.URL(p.Name), p.Health)
}

// BinDir is the folder of the built binaries.
func (s *Stack) BinDir() string { return s.binDir }

// Env is the environment every process gets (a copy).
func (s *Stack) Env() []string { return append([]string{}, s.baseEnv...) }

// Addrs maps each HTTP process to its address (a copy).
func (s *Stack) Addrs() map[string]string {
	out := make(map[string]string, len(s.addrs))
	for k, v := range s.addrs {
		out[k] = v
	}
	return out
}

// OperatorTools are the operator tools (name → package) a stack with a gateway is built with: its
// demo data and API key are made with them, as scripts/stack.sh does. user-admin works on the user
// service's schema (its demo users and agent groups, users, API keys); ccadmin is a client of the
// other services' APIs and events (their demo data, simulated calls, dialers, imports).
func OperatorTools() map[string]string {
	return map[string]string{
		"user-admin": "./services/user/cmd/user-admin",
		"ccadmin":    "./tools/cmd/ccadmin",
	}
}

// UserAdmin runs user-admin with the stack's environment and returns its stdout.
func (s *Stack) UserAdmin(args ...string) (string, error) {
	return s.ToolEnv("user-admin", nil, args...)
}

// CCAdmin runs ccadmin with the stack's environment and returns its stdout.
func (s *Stack) CCAdmin(args ...string) (string, error) { return s.ToolEnv("ccadmin", nil, args...) }

// ToolEnv runs the tool of Config.Tools called name with the stack's environment plus extra
// variables (later ones win) and returns its stdout.
func (s *Stack) ToolEnv(name string, extra []string, args ...string) (string, error) {
	pkg, ok := s.cfg.Tools[name]
	if !ok {
		return "", fmt.Errorf("%s is not a tool of the stack (Config.Tools)", name)
	}
	cmd := exec.Command(s.binary(Process{Pkg: pkg}), args...)
	cmd.Env = append(s.Env(), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// seed loads the demo data and makes the admin's key as scripts/stack.sh does: the user service's
// users and agent groups first, which the other services' demo data names.
func (s *Stack) seed() error {
	if _, err := s.UserAdmin("seed"); err != nil {
		return err
	}
	if _, err := s.CCAdmin("seed", "--demo"); err != nil {
		return err
	}
	key, err := s.UserAdmin("apikey", "create", "--email", "admin@demo.callcenter.local", "--name", "e2e")
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
	for _, p := range s.cfg.Processes {
		if p.Name == name {
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

// Close stops every process, last started first, and removes the binaries it built.
func (s *Stack) Close() {
	for i := len(s.cfg.Processes) - 1; i >= 0; i-- {
		s.kill(s.cfg.Processes[i].Name, syscall.SIGTERM)
	}
	if s.ownBin {
		_ = os.RemoveAll(s.binDir)
	}
}

// DumpLogs writes the tail of every process's log to w.
func (s *Stack) DumpLogs(w io.Writer) {
	entries, _ := os.ReadDir(s.logDir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(s.logDir, e.Name()))
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		fmt.Fprintf(w, "---- %s (tail) ----\n%s\n", e.Name(), b)
	}
}

// RepoRoot is the folder of the go.work the caller runs in.
func RepoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK: %w", err)
	}
	w := strings.TrimSpace(string(out))
	if w == "" || w == "off" {
		return "", fmt.Errorf("the stack is built inside the workspace (go.work)")
	}
	return filepath.Dir(w), nil
}

// URLVar is the variable that gives process name's address to the others, as scripts/stack.sh
// names it: upper case, "-" as "_", a trailing "-api" dropped (lead-api → LEAD_URL, call-ingest →
// CALL_INGEST_URL).
func URLVar(name string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(name, "-api"), "-", "_")) + "_URL"
}
