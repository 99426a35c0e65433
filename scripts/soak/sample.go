package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"ccplatform/gateway/e2e/loadtest"
	"ccplatform/gateway/e2e/stacktest"
)

// procStat is what one process's /metrics said.
type procStat struct {
	rss, goroutines, dbConns float64
	hasDB, ok                bool
}

// sample is every process's figures at one moment of the run.
type sample struct {
	at    time.Duration
	order []string
	procs map[string]procStat
}

// sampler reads each process's /metrics (the gateway's on its private listener).
type sampler struct {
	client *http.Client
	names  []string
	urls   map[string]string
}

func newSampler(st *stacktest.Stack, procs []stacktest.Process) *sampler {
	s := &sampler{client: &http.Client{Timeout: 5 * time.Second}, urls: map[string]string{}}
	for _, p := range procs {
		s.names = append(s.names, p.Name)
		if p.Name == "gateway" {
			s.urls[p.Name] = st.MetricsURL(p.Name) + "/metrics"
		} else {
			s.urls[p.Name] = st.URL(p.Name) + "/metrics"
		}
	}
	return s
}

// take reads every process scrapes times, every so often, and keeps the lowest of each figure:
// what a process holds for itself, above which a leak would show.
func (s *sampler) take(ctx context.Context, at time.Duration, scrapes int, every time.Duration) sample {
	out := sample{at: at, order: s.names, procs: map[string]procStat{}}
	for i := range scrapes {
		if i > 0 {
			time.Sleep(every)
		}
		for _, name := range s.names {
			st, err := s.scrape(ctx, s.urls[name])
			if err != nil {
				fmt.Printf("soak: metrics of %s: %v\n", name, err)
				continue
			}
			if prev := out.procs[name]; prev.ok {
				st.rss, st.goroutines, st.dbConns = min(st.rss, prev.rss), min(st.goroutines, prev.goroutines), min(st.dbConns, prev.dbConns)
			}
			out.procs[name] = st
		}
	}
	return out
}

// settle waits d without load, printing every process's goroutines every 15 s on the way, and
// samples its last 15 s once a second: a process's own background work (probes, pool reapers)
// comes and goes in between.
func (s *sampler) settle(ctx context.Context, out io.Writer, at, d time.Duration) *sample {
	const tail = 15 * time.Second
	fmt.Fprintf(out, "  settling %s without load for the growth check (goroutines: %s)\n", d, strings.Join(s.names, " "))
	for waited := time.Duration(0); waited < d-tail; {
		step := min(15*time.Second, d-tail-waited)
		select {
		case <-time.After(step):
		case <-ctx.Done():
			return nil
		}
		waited += step
		cur := s.take(ctx, at, 1, 0)
		var counts []string
		for _, name := range s.names {
			counts = append(counts, strconv.Itoa(int(cur.procs[name].goroutines)))
		}
		fmt.Fprintf(out, "    %4.0fs %s\n", waited.Seconds(), strings.Join(counts, " "))
	}
	sm := s.take(ctx, at, int(tail/time.Second)+1, time.Second)
	fmt.Fprintf(out, "  settled: %s\n", sm.describe())
	return &sm
}

// describe is the sample on one line: name RSS/goroutines/connections per process.
func (sm sample) describe() string {
	var parts []string
	for _, name := range sm.order {
		p := sm.procs[name]
		parts = append(parts, fmt.Sprintf("%s %.1fMiB/%.0fg/%.0fc", name, p.rss/mib, p.goroutines, p.dbConns))
	}
	return strings.Join(parts, " ")
}

func (s *sampler) scrape(ctx context.Context, url string) (procStat, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return procStat{}, fmt.Errorf("request: %w", err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return procStat{}, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return procStat{}, fmt.Errorf("get %s: status %d", url, resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads the three figures from a Prometheus text exposition; open connections are
// summed over the process's pools (one per db_name).
func parseMetrics(r io.Reader) (procStat, error) {
	var st procStat
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line[:strings.IndexAny(line+" ", "{ ")]
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			continue
		}
		switch name {
		case "process_resident_memory_bytes":
			st.rss = v
		case "go_goroutines":
			st.goroutines = v
		case "go_sql_open_connections":
			st.dbConns += v
			st.hasDB = true
		}
	}
	if err := sc.Err(); err != nil {
		return st, fmt.Errorf("read metrics: %w", err)
	}
	st.ok = st.rss > 0 && st.goroutines > 0
	if !st.ok {
		return st, fmt.Errorf("no process_resident_memory_bytes or go_goroutines")
	}
	return st, nil
}

const mib = 1 << 20

// printWindow prints one window: throughput, answers by status, p99 per route, and each process.
func printWindow(out io.Writer, n int, w *window, s sample) {
	total := w.outcomes.count(func(outcome) bool { return true })
	fmt.Fprintf(out, "\n── window %d (load to %s) ── %d requests, %.1f req/s (load paused %.1f s for the sample)",
		n, s.at.Round(time.Second), total, float64(total)/(w.elapsed-w.pause).Seconds(), w.pause.Seconds())
	if w.late > 0 {
		fmt.Fprintf(out, ", %d not sent (every worker busy)", w.late)
	}
	fmt.Fprintln(out)
	byStatus := map[int]int{}
	purposeful := map[int]bool{}
	for k, v := range w.outcomes {
		byStatus[k.status] += v
		if k.expected && !success(k.status) {
			purposeful[k.status] = true
		}
	}
	var parts []string
	for _, status := range slices.Sorted(maps.Keys(byStatus)) {
		mark := ""
		if purposeful[status] {
			mark = " (some on purpose)"
		}
		parts = append(parts, fmt.Sprintf("%s=%d%s", statusLabel(status), byStatus[status], mark))
	}
	fmt.Fprintf(out, "  status  %s\n", strings.Join(parts, "  "))
	if bad := w.outcomes.count(func(k outcome) bool { return !k.expected }); bad > 0 {
		fmt.Fprintf(out, "  UNEXPECTED  %s\n", w.outcomes.describe(func(k outcome) bool { return !k.expected }))
	}
	line := "  p99 ms "
	for _, route := range slices.Sorted(maps.Keys(w.latencies)) {
		item := fmt.Sprintf(" %s %.1f |", route, loadtest.Millis(loadtest.Percentile(w.latencies[route], 0.99)))
		if len(line)+len(item) > 130 {
			fmt.Fprintln(out, strings.TrimSuffix(line, " |"))
			line = "        "
		}
		line += item
	}
	fmt.Fprintln(out, strings.TrimSuffix(line, " |"))
	fmt.Fprintf(out, "  %-20s %8s %11s %9s\n", "process", "RSS MiB", "goroutines", "DB conns")
	for _, name := range s.order {
		p := s.procs[name]
		if !p.ok {
			fmt.Fprintf(out, "  %-20s %8s %11s %9s\n", name, "?", "?", "?")
			continue
		}
		db := "-"
		if p.hasDB {
			db = strconv.Itoa(int(p.dbConns))
		}
		fmt.Fprintf(out, "  %-20s %8.1f %11.0f %9s\n", name, p.rss/mib, p.goroutines, db)
	}
}
