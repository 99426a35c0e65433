// Command soak sends a steady mix of every operation of the public API through the gateway at a
// fixed rate for a bounded time, on the real binaries (gateway/e2e/stacktest) with a database and a
// broker vhost of its own, both removed afterwards. Each minute it prints the throughput, the p99
// of every route, the answers by status, and each process's RSS, goroutines and open database
// connections read from its /metrics. It fails on any 5xx, transport error or status the mix did
// not ask for, and when a process's RSS or goroutines grow more than 10% from the end of minute 2
// to the end. `make soak` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"ccplatform/gateway/e2e/stacktest"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mqtest"
)

// Config bounds the run.
type Config struct {
	Duration time.Duration
	Rate     int
	// Workers bounds the requests in flight: a request that finds every worker busy is counted
	// late and not sent, so a slow stack shows as a lower rate instead of a growing queue here.
	Workers int
	// Baseline is when the growth check takes its first sample: the first minutes fill pools,
	// caches and heaps, which is warm-up, not a leak.
	Baseline time.Duration
	// Settle is how long the load stands still before each sample of the growth check.
	Settle time.Duration
	// CallsEvery is how often a batch of telephony call events is published (the call writes).
	CallsEvery time.Duration
}

// maxGrowth is how much a process's RSS or goroutines may grow from the baseline to the end.
const maxGrowth = 0.10

const internalToken = "soak-internal-token"

func main() {
	cfg := Config{Duration: 10 * time.Minute, Rate: 300, Workers: 64, Baseline: 2 * time.Minute, Settle: 135 * time.Second, CallsEvery: 30 * time.Second}
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak: SOAK_DURATION:", err)
			os.Exit(2)
		}
		cfg.Duration = d
	}
	flag.DurationVar(&cfg.Duration, "d", cfg.Duration, "how long the load runs (default from SOAK_DURATION, else 10m)")
	flag.IntVar(&cfg.Rate, "rate", cfg.Rate, "requests per second sent through the gateway")
	flag.IntVar(&cfg.Workers, "workers", cfg.Workers, "requests in flight at most")
	flag.DurationVar(&cfg.Baseline, "baseline", cfg.Baseline, "growth is measured from this point of the run to its end")
	flag.DurationVar(&cfg.Settle, "settle", cfg.Settle, "the load stands still this long before each sample of the growth check (past the services' 120 s idle timeout; the last 15 s are sampled)")
	flag.DurationVar(&cfg.CallsEvery, "calls-every", cfg.CallsEvery, "publish 20 telephony call events this often")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// processes is the whole platform, as the end-to-end tests start it.
func processes() []stacktest.Process {
	return []stacktest.Process{
		{Name: "user", Pkg: "./services/user/cmd/user", Health: "/readyz"},
		{Name: "order", Pkg: "./services/order/cmd/order", Health: "/readyz"},
		{Name: "lead-api", Pkg: "./services/lead/cmd/lead-api", Health: "/readyz"},
		{Name: "lead-worker", Pkg: "./services/lead/cmd/lead-worker", Health: "/readyz", Consumer: true},
		{Name: "call", Pkg: "./services/call/cmd/call", Health: "/readyz"},
		{Name: "call-ingest", Pkg: "./services/call/cmd/call-ingest", Health: "/readyz", Consumer: true},
		{Name: "notification-api", Pkg: "./services/notification/cmd/notification-api", Health: "/readyz"},
		{Name: "notification-worker", Pkg: "./services/notification/cmd/notification-worker", Health: "/readyz", Consumer: true},
		// One key sends the whole mix, above the per-key default of 200/s; the missing-key requests
		// of the mix come from one address, above the default 401 budget.
		{Name: "gateway", Pkg: "./gateway/cmd/gateway", Health: "/readyz",
			Env: []string{"RATE_LIMIT_RPS=100000", "RATE_LIMIT_BURST=100000", "AUTH_FAILURE_RPS=100000", "AUTH_FAILURE_BURST=100000"}},
	}
}

func run(ctx context.Context, cfg Config, out io.Writer) (bool, error) {
	dbURL, dropDB, err := dbtest.Create("soak")
	if err != nil {
		return false, err
	}
	defer func() { _ = dropDB() }()
	amqpURL, dropVhost, err := mqtest.CreateVhost("soak")
	if err != nil {
		return false, err
	}
	defer func() { _ = dropVhost() }()

	fmt.Fprintln(out, "soak: building and starting the stack")
	st, err := stacktest.Start(stacktest.Config{
		DatabaseURL: dbURL, AMQPURL: amqpURL, InternalToken: internalToken,
		Processes: processes(), Tools: stacktest.OperatorTools(),
	})
	if st != nil {
		defer st.Close()
	}
	if err != nil {
		if st != nil {
			st.DumpLogs(os.Stderr)
		}
		return false, fmt.Errorf("start stack: %w", err)
	}
	fmt.Fprintf(out, "soak: logs in %s\n", st.LogDir())

	m := newMix(st.BaseURL, st.APIKey, cfg.Workers)
	if err := m.setup(ctx); err != nil {
		return false, fmt.Errorf("setup: %w", err)
	}
	procs := newSampler(st, processes())
	fmt.Fprintf(out, "soak: %d req/s for %s, %d workers, call events every %s, growth measured from %s to the end (each sample after %s without load)\n",
		cfg.Rate, cfg.Duration, cfg.Workers, cfg.CallsEvery, cfg.Baseline, cfg.Settle)

	m.rec.swap() // the first window starts with the load, not with the setup
	loadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { m.drive(loadCtx, cfg.Rate, cfg.Workers) })
	wg.Go(func() { m.publishCalls(loadCtx, st, cfg.CallsEvery) })

	// The load runs in windows of a minute (the last one may be shorter); the time it stands
	// still for a sample is not counted in the duration.
	var loaded time.Duration
	var base, end *sample
	for minute := 1; ; minute++ {
		win := min(time.Minute, cfg.Duration-loaded)
		select {
		case <-time.After(win):
		case <-ctx.Done():
		}
		loaded += win
		last := loaded >= cfg.Duration || ctx.Err() != nil
		if last {
			// The last window's requests finish before it is counted.
			cancel()
			wg.Wait()
		}
		// Each minute's figures are read with the load stopped for a moment (about 1.5 s), so
		// that they count the processes, not the requests in flight at that instant.
		paused := time.Now()
		m.quiet()
		s := procs.take(ctx, loaded, 4, 300*time.Millisecond)
		m.rec.paused(time.Since(paused))
		printMinute(out, minute, m.rec.swap(), s)
		// The growth check compares samples taken once every idle keep-alive connection left
		// from the minutes before has closed: their goroutines and buffers follow the busiest
		// moment of the last two minutes, which on a shared machine is noise, not a leak.
		settled := time.Now()
		switch {
		case last && base != nil:
			end = procs.settle(ctx, out, loaded, cfg.Settle)
		case !last && base == nil && loaded >= cfg.Baseline:
			base = procs.settle(ctx, out, loaded, cfg.Settle)
		}
		// Counted in the next window, whose rate would otherwise include it.
		m.rec.paused(time.Since(settled))
		m.resume()
		if last {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return verdict(out, cfg, m, base, end), nil
}

// verdict prints why the run failed, or that it passed.
func verdict(out io.Writer, cfg Config, m *mix, base, end *sample) bool {
	var fails []string
	tot := m.rec.totals()
	if n := tot.count(func(k outcome) bool { return k.status >= 500 }); n > 0 {
		fails = append(fails, fmt.Sprintf("%d 5xx answers: %s", n, tot.describe(func(k outcome) bool { return k.status >= 500 })))
	}
	if n := tot.count(func(k outcome) bool { return k.status == 0 }); n > 0 {
		fails = append(fails, fmt.Sprintf("%d requests without an answer: %s", n, tot.describe(func(k outcome) bool { return k.status == 0 })))
	}
	unexpected := func(k outcome) bool { return !k.expected && k.status != 0 && k.status < 500 }
	if n := tot.count(unexpected); n > 0 {
		fails = append(fails, fmt.Sprintf("%d answers the mix did not ask for: %s", n, tot.describe(unexpected)))
	}
	if n := m.callErrors.Load(); n > 0 {
		fails = append(fails, fmt.Sprintf("%d batches of call events could not be published (see above)", n))
	}
	if base == nil || end == nil {
		fmt.Fprintf(out, "growth not checked: the run is not longer than the baseline (%s)\n", cfg.Baseline)
	} else {
		fmt.Fprintf(out, "growth from %s to %s (settled samples):\n", base.at, end.at)
		for _, name := range end.order {
			b, l := base.procs[name], end.procs[name]
			if !b.ok || !l.ok {
				fails = append(fails, fmt.Sprintf("%s: metrics not read at %s or at the end", name, base.at))
				continue
			}
			rss, gor := growth(b.rss, l.rss), growth(b.goroutines, l.goroutines)
			fmt.Fprintf(out, "  %-20s RSS %6.1f → %6.1f MiB (%+5.1f%%)  goroutines %4.0f → %4.0f (%+5.1f%%)\n",
				name, b.rss/mib, l.rss/mib, 100*rss, b.goroutines, l.goroutines, 100*gor)
			if rss > maxGrowth {
				fails = append(fails, fmt.Sprintf("%s: RSS grew %.1f%% (%.1f → %.1f MiB), more than %.0f%%", name, 100*rss, b.rss/mib, l.rss/mib, 100*maxGrowth))
			}
			if gor > maxGrowth {
				fails = append(fails, fmt.Sprintf("%s: goroutines grew %.1f%% (%.0f → %.0f), more than %.0f%%", name, 100*gor, b.goroutines, l.goroutines, 100*maxGrowth))
			}
		}
	}
	fmt.Fprintf(out, "total: %d requests, %s\n", tot.count(func(outcome) bool { return true }), tot.describe(func(outcome) bool { return true }))
	for _, f := range fails {
		fmt.Fprintln(out, "FAIL:", f)
	}
	if len(fails) == 0 {
		fmt.Fprintln(out, "PASS: no 5xx, no unexpected answer, no process grew more than 10% in RSS or goroutines")
	}
	return len(fails) == 0
}

func growth(from, to float64) float64 {
	if from <= 0 {
		return 0
	}
	return (to - from) / from
}
