package k8stest

import (
	"sort"
	"testing"
)

// Names shared by the manifests and the test.
const (
	nameLabel      = "app.kubernetes.io/name"
	componentLabel = "app.kubernetes.io/component"
	// platformImage is the one image of every binary (deployments/docker/Dockerfile).
	platformImage = "callcenter/platform"
	// platformUID is the Dockerfile's user.
	platformUID = 10001
)

// cliBinaries run as one-off commands (a Job, kubectl run), never as a Deployment.
func cliBinaries() map[string]bool { return map[string]bool{"user-admin": true, "ccadmin": true} }

// queueConst names a queue-name constant in the Go sources.
type queueConst struct{ file, name string }

// workerQueues says which queues each worker consumes, by the constants that name them. The
// values are read from the sources, and each constant's package must be one the worker is built
// from, so a renamed queue or a moved consumer shows here.
func workerQueues() map[string][]queueConst {
	return map[string][]queueConst{
		"lead-worker": {
			{"services/lead/internal/asynccreate/accept.go", "Queue"},
			{"services/lead/internal/callresult/event.go", "Queue"},
		},
		"call-ingest":         {{"pkg/telephony/telephony.go", "Queue"}},
		"agent-events":        {{"pkg/telephony/agents.go", "AgentsQueue"}},
		"notification-worker": {{"services/notification/internal/command/command.go", "Queue"}},
		"webhook-dispatcher":  {{"services/webhook/internal/fanout/fanout.go", "Queue"}},
		"report-worker":       {{"services/report/internal/ingest/facts.go", "Queue"}},
	}
}

// serviceURLVars maps each variable that holds a platform service's base URL to the binary (and
// Service) answering it: a binary that reads the variable calls that service.
func serviceURLVars() map[string]string {
	return map[string]string{
		"USER_URL":         "user",
		"ORDER_URL":        "order",
		"LEAD_URL":         "lead-api",
		"CALL_URL":         "call",
		"NOTIFICATION_URL": "notification-api",
		"WEBHOOK_URL":      "webhook-api",
		"REPORT_URL":       "report",
	}
}

// suite is what every check reads from the Go sources, built once.
type suite struct {
	binaries map[string]*binary
	queues   map[string][]string // worker → the queue names it consumes, from the sources
}

func newSuite(t *testing.T) *suite {
	t.Helper()
	src, err := newSourceTree(repoRoot)
	if err != nil {
		t.Fatalf("reading the Go workspace: %v", err)
	}
	bins, err := findBinaries(src)
	if err != nil {
		t.Fatalf("reading the binaries' configuration: %v", err)
	}
	s := &suite{binaries: bins, queues: map[string][]string{}}
	for worker, consts := range workerQueues() {
		b, ok := bins[worker]
		if !ok {
			t.Fatalf("workerQueues names %s, which is no cmd/<name> of the workspace", worker)
		}
		for _, c := range consts {
			q, err := stringConst(src.rootDir(), c.file, c.name)
			if err != nil {
				t.Fatalf("queue of %s: %v", worker, err)
			}
			if pkg := src.packageOfFile(c.file); !b.packages[pkg] {
				t.Fatalf("workerQueues: %s is not built from %s (%s.%s): does it still consume %q?", worker, pkg, pkg, c.name, q)
			}
			s.queues[worker] = append(s.queues[worker], q)
		}
		sort.Strings(s.queues[worker])
	}
	return s
}

// workers are the binaries that consume queues, sorted.
func (s *suite) workers() []string { return sortedKeys(s.queues) }

// isWorker reports whether a binary is a queue worker (scaled by KEDA, called by nobody).
func (s *suite) isWorker(name string) bool {
	_, ok := s.queues[name]
	return ok
}

// allQueues are every queue a worker consumes, sorted.
func (s *suite) allQueues() []string {
	var out []string
	for _, qs := range s.queues {
		out = append(out, qs...)
	}
	sort.Strings(out)
	return out
}

// callers are the binaries that call a platform service: those reading its URL variable.
func (s *suite) callers(service string) []string {
	var out []string
	for v, svc := range serviceURLVars() {
		if svc != service {
			continue
		}
		for name, b := range s.binaries {
			if b.reads(v) {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// readers are the binaries that read a variable, sorted.
func (s *suite) readers(variable string) []string {
	var out []string
	for name, b := range s.binaries {
		if b.reads(variable) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// TestSources checks the test's own reading of the Go sources, so that a manifest check that
// passes does not pass because the sources were misread.
func TestSources(t *testing.T) {
	s := newSuite(t)
	for _, name := range sortedKeys(s.binaries) {
		b := s.binaries[name]
		t.Logf("%s reads %v; required: %v", name, sortedKeys(b.env), b.required())
	}
	// Every binary reads its listener and the common settings; these prove the walk follows
	// app.Main, embedded structs across packages (config.Common) and pkg/app's own Process.
	for name, b := range s.binaries {
		want := []string{"LOG_LEVEL", "INTERNAL_TOKEN"}
		if !cliBinaries()[name] {
			want = append(want, "HTTP_ADDR", "APP_ENV", "DRAIN_DELAY")
		}
		for _, v := range want {
			if !b.reads(v) {
				t.Errorf("%s: the test found no read of %s: the source walk is broken", name, v)
			}
		}
	}
	if gw := s.binaries["gateway"]; gw == nil || len(gw.required()) == 0 {
		t.Errorf("gateway: no required variable found (LEAD_URL, CALL_URL and NOTIFICATION_URL have no default)")
	}
	if len(s.allQueues()) == 0 {
		t.Errorf("no queue constants read")
	}
}
