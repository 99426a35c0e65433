// What a benchmark reads of the processes it measures: CPU time and memory from /proc.

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpuUse is CPU time so far: lead-worker's, each backend's of the bench's database (the
// database name is in a backend's process title; the server's shared processes, walwriter and
// checkpointer, and other databases' backends are left out) and the whole machine's, busy (all but
// idle and iowait) and in total, from /proc.
type cpuUse struct {
	worker      time.Duration
	backends    map[int]time.Duration
	busy, total int64
}

func (b *bench) cpuNow() (cpuUse, error) {
	u := cpuUse{backends: map[int]time.Duration{}}
	var err error
	if u.worker, err = processCPU(b.stack.PID("lead-worker")); err != nil {
		return u, fmt.Errorf("CPU of lead-worker: %w", err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return u, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.HasPrefix(title, []byte("postgres: ")) || !bytes.Contains(title, []byte(" "+b.dbName+" ")) {
			continue
		}
		if d, err := processCPU(pid); err == nil {
			u.backends[pid] = d
		}
	}
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return u, err
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return u, fmt.Errorf("/proc/stat: %q", line)
	}
	for i, v := range f[1:8] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/stat: %q", line)
		}
		u.total += n
		if i != 3 && i != 4 { // idle, iowait
			u.busy += n
		}
	}
	return u, nil
}

// perItem describes the CPU used from u to v for n items (jobs, rows) done in wall time. A
// backend that ended in between is missing from it (the pools keep theirs).
func (u cpuUse) perItem(v cpuUse, n int, wall time.Duration) string {
	var pg time.Duration
	for pid, d := range v.backends {
		pg += d - u.backends[pid]
	}
	worker := v.worker - u.worker
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(n, 1)) }
	core := func(d time.Duration) float64 { return 100 * d.Seconds() / wall.Seconds() }
	busy := float64(v.busy-u.busy) / float64(max(v.total-u.total, 1)) * float64(runtime.NumCPU())
	return fmt.Sprintf("CPU per item: lead-worker %.1f µs, its database's backends %.1f µs; in %% of one core: lead-worker %.0f%%, backends %.0f%%, the rest of the machine %.0f%% (%d cores)",
		per(worker), per(pg), core(worker), core(pg), 100*busy-core(worker)-core(pg), runtime.NumCPU())
}

// memory is a process's VmRSS and VmHWM, and of VmRSS the anonymous and the file-backed part
// (the binary's pages), in bytes.
type memory struct{ rss, hwm, anon, file int }

// procMemory reads VmRSS, VmHWM, RssAnon and RssFile from /proc/<pid>/status.
func procMemory(pid int) (memory, error) {
	if pid == 0 {
		return memory{}, errors.New("memory: process not running")
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		field := map[string]*int{"VmRSS": &m.rss, "VmHWM": &m.hwm, "RssAnon": &m.anon, "RssFile": &m.file}[name]
		if !ok || field == nil {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		if err != nil {
			return memory{}, fmt.Errorf("/proc/%d/status: %s: %w", pid, name, err)
		}
		*field = kb << 10
	}
	return m, sc.Err()
}

// rssSampler records the highest VmRSS of some processes until stopped.
type rssSampler struct {
	done  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	peaks map[int]int
}

func sampleRSS(every time.Duration, pids ...int) *rssSampler {
	s := &rssSampler{done: make(chan struct{}), peaks: map[int]int{}}
	s.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			for _, pid := range pids {
				if m, err := procMemory(pid); err == nil {
					s.mu.Lock()
					s.peaks[pid] = max(s.peaks[pid], m.rss)
					s.mu.Unlock()
				}
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	})
	return s
}

// stop ends the sampling and returns each process's highest VmRSS.
func (s *rssSampler) stop() map[int]int {
	close(s.done)
	s.wg.Wait()
	return s.peaks
}

func mib[T int | int64](n T) float64 { return float64(n) / (1 << 20) }

// cpuShares is CPU time so far by who spent it: every process of the stack by name, the bench
// database's backends and the server's walsenders together ("postgres"; a walsender's title does
// not name its database, so another database's would count too), RabbitMQ ("rabbitmq", the
// beam.smp of the single node) and this program ("load client").
func (b *bench) cpuShares() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name := range b.stack.Addrs() {
		if d, err := processCPU(b.stack.PID(name)); err == nil {
			out[name] = d
		}
	}
	if d, err := processCPU(os.Getpid()); err == nil {
		out["load client"] = d
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		var who string
		switch {
		case bytes.HasPrefix(title, []byte("postgres: ")) && (bytes.Contains(title, []byte(" "+b.dbName+" ")) || bytes.Contains(title, []byte("walsender"))):
			who = "postgres"
		case bytes.Contains(title, []byte("beam.smp")) && bytes.Contains(title, []byte("rabbit")) && !bytes.Contains(title, []byte("rabbit-c")):
			who = "rabbitmq"
		default:
			continue
		}
		if d, err := processCPU(pid); err == nil {
			out[who] += d
		}
	}
	return out
}

// perShare describes the CPU each spender used from u to v for n items, largest first.
func perShare(u, v map[string]time.Duration, n int) string {
	type share struct {
		who string
		d   time.Duration
	}
	var all []share
	var total time.Duration
	for who, d := range v {
		if d -= u[who]; d > 0 {
			all = append(all, share{who, d})
			total += d
		}
	}
	slices.SortFunc(all, func(a, b share) int { return cmp.Compare(b.d, a.d) })
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(max(n, 1)) }
	parts := []string{fmt.Sprintf("total %.0f µs", per(total))}
	for _, s := range all {
		parts = append(parts, fmt.Sprintf("%s %.0f", s.who, per(s.d)))
	}
	return strings.Join(parts, ", ")
}
