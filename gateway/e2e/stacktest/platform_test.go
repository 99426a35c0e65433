package stacktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlatformIsTheTableOfStackScript(t *testing.T) {
	procs, err := Platform()
	if err != nil {
		t.Fatal(err)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Process{}
	for _, p := range procs {
		if _, dup := byName[p.Name]; dup {
			t.Errorf("%s twice", p.Name)
		}
		byName[p.Name] = p
		if _, err := os.Stat(filepath.Join(root, p.Pkg, "main.go")); err != nil {
			t.Errorf("%s: package %s: %v", p.Name, p.Pkg, err)
		}
		if p.Health != "/readyz" {
			t.Errorf("%s: health %q, want /readyz", p.Name, p.Health)
		}
		for _, kv := range p.Env {
			if strings.Contains(kv, "_ADDR=") {
				t.Errorf("%s: fixed address %s kept", p.Name, kv)
			}
		}
	}
	if last := procs[len(procs)-1].Name; last != "gateway" {
		t.Errorf("last process %s, want gateway", last)
	}
	for _, name := range []string{"lead-worker", "call-ingest", "notification-worker", "webhook-dispatcher", "report-worker"} {
		if !byName[name].Consumer {
			t.Errorf("%s: not a consumer (%+v)", name, byName[name])
		}
	}
	for _, name := range []string{"user", "order", "lead-api", "call", "notification-api", "webhook-api", "report", "gateway"} {
		if p, ok := byName[name]; !ok || p.Consumer {
			t.Errorf("%s: missing or a consumer (%+v)", name, p)
		}
	}
}

func TestParseStackScript(t *testing.T) {
	script := `set -e
PROCESSES=(
  "user    | ./services/user/cmd/user   | 8081 | "
  # a comment
  "lead-worker | ./services/lead/cmd/lead-worker | 8093 | A=1 B=2"
  "gateway | ./gateway/cmd/gateway      | 8080 | METRICS_ADDR=127.0.0.1:9080 C=3"
)
CONSUMERS=" lead-worker "  # probes only
`
	procs, err := parseStackScript(strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{
		{Name: "user", Pkg: "./services/user/cmd/user", Health: "/readyz"},
		{Name: "lead-worker", Pkg: "./services/lead/cmd/lead-worker", Health: "/readyz", Consumer: true, Env: []string{"A=1", "B=2"}},
		{Name: "gateway", Pkg: "./gateway/cmd/gateway", Health: "/readyz", Env: []string{"C=3"}},
	}
	if len(procs) != len(want) {
		t.Fatalf("got %+v, want %+v", procs, want)
	}
	for i := range want {
		g, w := procs[i], want[i]
		if g.Name != w.Name || g.Pkg != w.Pkg || g.Health != w.Health || g.Consumer != w.Consumer || strings.Join(g.Env, " ") != strings.Join(w.Env, " ") {
			t.Errorf("process %d: got %+v, want %+v", i, g, w)
		}
	}

	for name, bad := range map[string]string{
		"no table":          `CONSUMERS=""`,
		"no consumers line": "PROCESSES=(\n\"a | ./a | 1 | \"\n)\n",
		"unknown consumer":  "PROCESSES=(\n\"a | ./a | 1 | \"\n)\nCONSUMERS=\" b \"\n",
		"three columns":     "PROCESSES=(\n\"a | ./a | 1\"\n)\nCONSUMERS=\"\"\n",
		"unclosed":          "PROCESSES=(\n\"a | ./a | 1 | \"\nCONSUMERS=\"\"\n",
	} {
		if _, err := parseStackScript(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
