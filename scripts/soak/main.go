// Command soak sends a steady mix of every operation of the public API through the gateway at a
// fixed rate for a bounded time, with a few percent of bad input among it, on the real binaries
// (every process `make up` starts, through gateway/e2e/stacktest) with a database and a broker
// vhost of its own, both removed afterwards. Its requests go through the generated Go client
// (clients/go), so a renamed field or route fails its build. Each window (a minute, 15 s in a
// short run) it prints the throughput, the p99 of every route, the answers by status, and each
// process's RSS, goroutines and open database connections read from its /metrics. It fails on
// any 5xx, transport error or status the mix did not ask for, on an operation of the API
// description the mix does not send or never got a success for, and when a process's RSS or
// goroutines grow (growth.go). `make soak` runs it; CI runs a short one.
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
	// Baseline is when the growth check of a long run takes its first sample: the first minutes
	// fill pools, caches and heaps, which is warm-up, not a leak. A run not longer than Baseline
	// is a short run (growth.go).
	Baseline time.Duration
	// Settle is how long the load stands still before each sample of a long run's growth check.
	Settle time.Duration
	// CallsEvery is how often a batch of telephony call events is published (the call writes).
	CallsEvery time.Duration
}

// short is a run too short for the settled growth check.
func (c Config) short() bool { return c.Duration <= c.Baseline }

// window is how long the load runs between two samples.
func (c Config) window() time.Duration {
	if c.short() {
		return shortWindow
	}
	return time.Minute
}

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
	flag.DurationVar(&cfg.Duration, "d", cfg.Duration, "how long the load runs (default from SOAK_DURATION, else 10m); up to -baseline it is a short run")
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

// processes is the whole platform as `make up` starts it (scripts/stack.sh), with what the soak
// changes for its own run.
func processes() ([]stacktest.Process, error) {
	procs, err := stacktest.Platform()
	if err != nil {
		return nil, err
	}
	for i, p := range procs {
		switch p.Name {
		case "gateway":
			// One key sends the whole mix, above the per-key default of 200/s; the missing-key
			// requests of the mix come from one address, above the default 401 budget.
			procs[i].Env = append(procs[i].Env, "RATE_LIMIT_RPS=100000", "RATE_LIMIT_BURST=100000", "AUTH_FAILURE_RPS=100000", "AUTH_FAILURE_BURST=100000")
		case "webhook-api", "webhook-dispatcher":
			// The receiver listens in this process, on 127.0.0.1 over http: allowed here, never
			// by default.
			procs[i].Env = append(procs[i].Env, "WEBHOOK_ALLOW_HTTP=true", "WEBHOOK_ALLOW_PRIVATE=true")
			// One owner creates subscriptions to one receiver all run long: the per-owner and
			// per-URL caps are for partners, not for a load that creates faster than it deletes.
			if p.Name == "webhook-api" {
				procs[i].Env = append(procs[i].Env, "WEBHOOK_MAX_PER_OWNER=1000000", "WEBHOOK_MAX_PER_URL=1000000")
			}
		case "user":
			// Likewise the cap of active keys per user.
			procs[i].Env = append(procs[i].Env, "API_KEY_MAX_ACTIVE=1000000")
		}
	}
	return procs, nil
}

func run(ctx context.Context, cfg Config, out io.Writer) (bool, error) {
	routes, err := loadRoutes()
	if err != nil {
		return false, err
	}
	procList, err := processes()
	if err != nil {
		return false, err
	}
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

	fmt.Fprintf(out, "soak: building and starting the stack (%d processes)\n", len(procList))
	st, err := stacktest.Start(stacktest.Config{
		DatabaseURL: dbURL, AMQPURL: amqpURL, InternalToken: internalToken,
		Processes: procList, Tools: stacktest.OperatorTools(),
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
	other, err := st.UserAdmin("apikey", "create", "--email", otherCaller, "--name", "soak other caller")
	if err != nil {
		return false, err
	}

	m, err := newMix(routes, st.BaseURL, callers{admin: st.APIKey, other: other}, cfg.Workers)
	if err != nil {
		return false, err
	}
	if err := m.setup(ctx); err != nil {
		return false, fmt.Errorf("setup: %w", err)
	}
	defer m.receiver.close()
	procs := newSampler(st, procList)
	fmt.Fprintf(out, "soak: %d req/s for %s, %d workers, %d operations, call events every %s; %s\n",
		cfg.Rate, cfg.Duration, cfg.Workers, len(routes), cfg.CallsEvery, growthPlan(cfg))

	m.rec.swap() // the first window starts with the load, not with the setup
	loadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { m.drive(loadCtx, cfg.Rate, cfg.Workers) })
	wg.Go(func() { m.publishCalls(loadCtx, st, cfg.CallsEvery) })

	// The time the load stands still for a sample is not counted in the duration.
	var loaded time.Duration
	var g growthSamples
	for n := 1; ; n++ {
		win := min(cfg.window(), cfg.Duration-loaded)
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
		// Each window's figures are read with the load stopped for a moment (about 1.5 s), so
		// that they count the processes, not the requests in flight at that instant.
		paused := time.Now()
		m.quiet()
		s := procs.take(ctx, loaded, 4, 300*time.Millisecond)
		m.rec.paused(time.Since(paused))
		printWindow(out, n, m.rec.swap(), s)
		settled := time.Now()
		g.observe(ctx, cfg, out, procs, s, loaded, last)
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
	return verdict(out, cfg, m, g), nil
}
