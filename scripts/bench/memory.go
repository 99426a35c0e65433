package main

import (
	"fmt"
)

// binaries are the platform's deployed binaries, each one process of the bench's stack: figure
// (8) reads their resident memory when the stack is up and again after the last phase. The
// variants the stack also runs (built with other tags, or pointed at a reference server) are
// measurement instruments, not binaries anyone deploys, and are left out.
func binaries() []string {
	return []string{"gateway", "user", "agent-events", "order", "lead-api", "lead-worker", "call", "call-ingest",
		"notification-api", "notification-worker", "webhook-api", "webhook-dispatcher", "report", "report-worker"}
}

// rssLimitAfter is figure (8)'s target: every binary's VmRSS after the whole run.
const rssLimitAfter = 40 << 20

// residentMemory is each binary's VmRSS now (0 when it cannot be read).
func (b *bench) residentMemory() map[string]int {
	out := map[string]int{}
	for _, name := range binaries() {
		if m, err := procMemory(b.stack.PID(name)); err == nil {
			out[name] = m.rss
		}
	}
	return out
}

// memoryAfter is figure (8): one row per binary, its VmRSS after every phase against the same
// process's VmRSS once the stack was up (before the first phase).
func (b *bench) memoryAfter() {
	after := b.residentMemory()
	fmt.Fprintln(b.out, "(8) resident memory of every binary: once the stack is up, and after the last phase")
	for _, name := range binaries() {
		start, end := b.rssAtStart[name], after[name]
		fmt.Fprintf(b.out, "    %-20s %6.1f MiB → %6.1f MiB\n", name, mib(start), mib(end))
		var ratio float64
		if start > 0 {
			ratio = float64(end) / float64(start)
		}
		b.rows = append(b.rows, row{
			name:     "(8) RSS after, " + name,
			platform: fmt.Sprintf("%.1f MiB", mib(end)),
			baseline: fmt.Sprintf("at start %.1f MiB", mib(start)),
			ratio:    ratio, target: "< 40 MiB", pass: end > 0 && end < rssLimitAfter,
		})
	}
}
