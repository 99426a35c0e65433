package main

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// binaries are the platform's deployed binaries, each one process of the bench's stack: figure
// (8) reads their resident memory when the stack is up and again after the last phase. The
// variants the stack also runs (built with other tags, or pointed at a reference server) are
// measurement instruments, not binaries anyone deploys, and are left out.
func binaries() []string {
	return []string{"gateway", "user", "agent-events", "order", "lead-api", "lead-worker", "call", "call-ingest",
		"notification-api", "notification-worker", "webhook-api", "webhook-dispatcher", "report", "report-worker"}
}

// settleFor is how long the stack stays idle before figure (8)'s second reading, the one its
// target holds for: three of pkg/app's checks for a quiet process, which then hands back the heap
// its last burst left.
const settleFor = 15 * time.Second

// rssLimitAfter is figure (8)'s target: every binary's VmRSS at rest after the whole run.
const rssLimitAfter = 40 << 20

// residentMemory is each binary's memory now (zero when it cannot be read).
func (b *bench) residentMemory() map[string]memory {
	out := map[string]memory{}
	for _, name := range binaries() {
		if m, err := procMemory(b.stack.PID(name)); err == nil {
			out[name] = m
		}
	}
	return out
}

// heapFigures are a process's Go heap in use and the heap size at which its next collection
// starts, from its metrics (the runtime's own figures), or "" when they cannot be read.
func (b *bench) heapFigures(name string) string {
	// The gateway serves its metrics on a listener of their own; the other binaries beside their
	// probes.
	base := b.stack.URL(name)
	if name == "gateway" {
		base = b.stack.MetricsURL(name)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil || resp.StatusCode != http.StatusOK {
		if err == nil {
			resp.Body.Close()
		}
		return ""
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return ""
	}
	value := func(metric string) float64 {
		for line := range strings.Lines(string(raw)) {
			if v, ok := strings.CutPrefix(line, metric+" "); ok {
				f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return f
			}
		}
		return 0
	}
	return fmt.Sprintf("; Go heap in use %.1f MiB, next collection at %.1f MiB, stacks %.1f MiB",
		value("go_memstats_heap_inuse_bytes")/(1<<20), value("go_memstats_next_gc_bytes")/(1<<20), value("go_memstats_stack_inuse_bytes")/(1<<20))
}

// memoryAfter is figure (8): one row per binary, its VmRSS after every phase against the same
// process's VmRSS once the stack was up (before the first phase).
func (b *bench) memoryAfter() {
	after := b.residentMemory()
	// With a CPU profile asked of lead-worker or lead-api, their heap profiles at this moment go
	// beside it (FILE.heap): what the memory figures below hold.
	for _, p := range []struct{ process, addr, file string }{
		{"lead-worker", b.workerPprof, b.cfg.ImportProfile},
		{"lead-api", b.apiPprof, cmp.Or(b.cfg.CreateProfile, b.cfg.AcceptProfile)},
	} {
		if p.addr != "" && p.file != "" {
			if err := heapProfile(p.addr, p.file+".heap"); err != nil {
				fmt.Fprintf(b.out, "    %s heap profile: %v\n", p.process, err)
			}
		}
	}
	heaps := map[string]string{}
	for _, name := range binaries() {
		heaps[name] = b.heapFigures(name)
	}
	// Right after a phase a process still holds that phase's garbage (the collector runs only as
	// it allocates): read again once the stack has been idle a while, to tell that from memory kept.
	time.Sleep(settleFor)
	settled := b.residentMemory()
	fmt.Fprintf(b.out, "(8) resident memory of every binary: once the stack is up, right after the last phase, %s later, and the peak\n", settleFor)
	for _, name := range binaries() {
		start, end := b.rssAtStart[name], after[name].rss
		fmt.Fprintf(b.out, "    %-20s %6.1f MiB → %6.1f MiB → %6.1f MiB, peak %6.1f MiB (right after: anonymous %.1f, the binary's pages %.1f%s)\n",
			name, mib(start), mib(end), mib(settled[name].rss), mib(settled[name].hwm), mib(after[name].anon), mib(after[name].file), heaps[name])
		// The target holds for the process at rest after the run: once it has been idle long
		// enough to hand a burst's heap back (pkg/app), which is the memory it keeps.
		kept := settled[name].rss
		var ratio float64
		if start > 0 {
			ratio = float64(kept) / float64(start)
		}
		b.rows = append(b.rows, row{
			name:     "(8) RSS after, " + name,
			platform: fmt.Sprintf("%.1f MiB (right after %.1f)", mib(kept), mib(end)),
			baseline: fmt.Sprintf("at start %.1f MiB", mib(start)),
			ratio:    ratio, target: "< 40 MiB", pass: kept > 0 && kept < rssLimitAfter,
		})
	}
}

// heapProfile writes the heap profile a PPROF_ADDR serves at addr to file.
func heapProfile(addr, file string) error {
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(file, raw, 0o644)
}
