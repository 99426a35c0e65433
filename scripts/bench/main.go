// Command bench measures the lead scenario of the platform, each figure beside a baseline measured
// in the same run on the same machine: sync creates through the gateway against a bare
// one-INSERT-per-request server, async accepts against a bare confirmed-publish loop, the worker's
// drain rate against single-row INSERTs, a bulk import's rows/s against that drain rate (with
// lead-api's memory while a 64 MiB file is uploaded), and the list page on a million leads against
// its two queries run directly. It runs the real binaries (gateway/e2e/stacktest) on a database and a
// broker vhost of its own, both removed afterwards. `make bench` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"ccplatform/gateway/e2e/loadtest"
	"ccplatform/gateway/e2e/stacktest"
	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/freeport"
	"ccplatform/pkg/mqtest"

	"github.com/jmoiron/sqlx"
)

// Config bounds the run: every phase lasts Duration (or a fixed count), so the whole bench takes
// a few minutes whatever the machine.
type Config struct {
	Concurrency       int
	Duration          time.Duration
	WorkerConcurrency int
	DrainJobs         int
	Rows              int
	ListRequests      int
	// Phases selects the phases to run (sync, async, import, list, dialer, webhook, report, live); import selects async
	// too, whose drain rate (figure (3)) is its baseline.
	Phases string
	// ImportRows is the size of the import phase's measured file; ImportProfile, when set, is where
	// a CPU profile of lead-worker's first ImportProfileFor on it is written.
	ImportRows       int
	ImportProfile    string
	ImportProfileFor time.Duration
	// AcceptProfile, when set, is where a CPU profile of lead-api during the measured async
	// accepts (figure (2)) is written.
	AcceptProfile string
	// CreateProfile, when set, is where a CPU profile of lead-api during the measured sync creates
	// of figure (1) at c clients is written.
	CreateProfile string
	// DialRows and DialDue size the dialing queue's order; DialBigRows (more than DialRows) adds
	// not-due leads afterwards to measure the lease's cost again (slow: off by default).
	DialRows    int
	DialDue     int
	DialBigRows int
	// ReportCalls is the calls of the report phase's year; IngestCalls the events of each of its
	// ingest rounds.
	ReportCalls int
	IngestCalls int
	// LiveDuration is how long figure (13)'s subscribers are measured.
	LiveDuration time.Duration
	// ReportKeep keeps the bench's database after the run (its name is printed); ReportReuse runs
	// on such a database instead of a fresh one, so the report phase measures the calls it already
	// holds rather than loading them again.
	ReportKeep  bool
	ReportReuse string
}

func main() {
	var cfg Config
	flag.IntVar(&cfg.Concurrency, "c", 16, "concurrent clients of the sync and async phases (and of their baselines)")
	flag.DurationVar(&cfg.Duration, "d", 5*time.Second, "length of each measured phase")
	flag.IntVar(&cfg.WorkerConcurrency, "worker-concurrency", 4, "lead-worker's WORKER_CONCURRENCY, also the connections of the INSERT baseline")
	flag.IntVar(&cfg.DrainJobs, "drain-jobs", 20_000, "jobs queued (at least) for lead-worker to drain")
	flag.IntVar(&cfg.Rows, "rows", 1_000_000, "leads bulk-loaded for the list phase")
	flag.IntVar(&cfg.ListRequests, "list-requests", 500, "list requests measured (one client)")
	flag.StringVar(&cfg.Phases, "phases", strings.Join(phaseNames, ","),
		"phases to run, comma-separated, in this order whatever the order given: sync (1), async (2, 3), "+
			"import (6: its baseline is figure (3), so it runs async too), list (4), dialer (5), webhook (7), report (10, 11, 12), live (13)")
	flag.IntVar(&cfg.ImportRows, "import-rows", 100_000, "rows of the import phase's measured CSV file")
	flag.StringVar(&cfg.ImportProfile, "import-profile", "",
		"write a CPU profile of lead-worker (PPROF_ADDR) while it imports the measured file to this file")
	flag.DurationVar(&cfg.ImportProfileFor, "import-profile-for", 8*time.Second, "length of that profile, from the 202")
	flag.StringVar(&cfg.AcceptProfile, "accept-profile", "",
		"write a CPU profile of lead-api (PPROF_ADDR) during the measured async accepts of figure (2) to this file")
	flag.StringVar(&cfg.CreateProfile, "create-profile", "",
		"write a CPU profile of lead-api (PPROF_ADDR) during the measured sync creates of figure (1) to this file")
	flag.IntVar(&cfg.DialRows, "dial-rows", 1_000_000, "leads of the dialing queue's order")
	flag.IntVar(&cfg.DialDue, "dial-due", 100_000, "of which due")
	flag.IntVar(&cfg.ReportCalls, "report-calls", 10_000_000, "calls loaded over a year across 200 orders for the report phase")
	flag.IntVar(&cfg.IngestCalls, "ingest-calls", 5_000, "platform events per round of the report phase's ingest cost")
	flag.DurationVar(&cfg.LiveDuration, "live-duration", 30*time.Second, "how long the live phase's 200 streams are measured")
	flag.BoolVar(&cfg.ReportKeep, "report-keep", false, "keep the bench's database after the run and print its name (for -report-reuse)")
	flag.StringVar(&cfg.ReportReuse, "report-reuse", "",
		"run on this kept database (-report-keep) instead of a fresh one: the report phase skips loading its calls (dropped afterwards unless -report-keep)")
	flag.IntVar(&cfg.DialBigRows, "dial-big-rows", 0, "then grow the order to this many leads (not due) and measure the lease again (e.g. 5000000; slow)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// bench is the running stack and what the phases share.
type bench struct {
	cfg      Config
	out      io.Writer
	stack    *stacktest.Stack
	leads    *sqlx.DB
	api      *loadtest.Client
	amqpURL  string
	order    int64
	code     string
	phoneSeq int64
	rows     []row
	// drained is figure (3)'s drain (jobs and time), the import phase's baseline.
	drained Result
	// workerPprof is lead-worker's PPROF_ADDR, with -import-profile; apiPprof lead-api's, with
	// -accept-profile.
	workerPprof, apiPprof string
	// dbName is the bench's database, dbURL its address.
	dbName string
	dbURL  string
	// rssAtStart is each binary's VmRSS once the stack was up: figure (8)'s baseline.
	rssAtStart map[string]int
}

// row is one line of the final table.
type row struct {
	name, platform, baseline string
	ratio                    float64
	target                   string
	pass                     bool
}

const internalToken = "bench-internal-token"

func run(ctx context.Context, cfg Config, out io.Writer) error {
	selected, addedAsync, err := selectPhases(cfg.Phases)
	if err != nil {
		return err
	}
	if addedAsync {
		fmt.Fprintln(out, "bench: the import phase's baseline is the drain of figure (3): running the async phase too")
	}
	dbURL, dropDB, err := dbtest.Create("bench")
	if cfg.ReportReuse != "" {
		dbURL, dropDB, err = dbtest.Existing(cfg.ReportReuse)
	}
	if err != nil {
		return err
	}
	defer func() {
		if cfg.ReportKeep {
			fmt.Fprintf(out, "bench: database %s kept: -report-reuse %s measures its calls again; drop it when done\n", dbName(dbURL), dbName(dbURL))
			return
		}
		// A database left behind holds every lead the run wrote: say so rather than leave it unseen.
		if err := dropDatabase(dbName(dbURL), dropDB); err != nil {
			fmt.Fprintf(os.Stderr, "bench: drop database %s: %v\n", dbName(dbURL), err)
		}
	}()
	amqpURL, dropVhost, err := mqtest.CreateVhost("bench")
	if err != nil {
		return err
	}
	defer func() { _ = dropVhost() }()

	fmt.Fprintf(out, "bench: building and starting the stack (database %s)\n", dbName(dbURL))
	workerEnv := []string{fmt.Sprintf("WORKER_CONCURRENCY=%d", cfg.WorkerConcurrency)}
	var workerPprof string
	if cfg.ImportProfile != "" {
		if workerPprof, err = freeport.Addr(); err != nil {
			return err
		}
		workerEnv = append(workerEnv, "PPROF_ADDR="+workerPprof)
	}
	var apiEnv []string
	var apiPprof string
	if cfg.AcceptProfile != "" || cfg.CreateProfile != "" {
		if apiPprof, err = freeport.Addr(); err != nil {
			return err
		}
		apiEnv = append(apiEnv, "PPROF_ADDR="+apiPprof)
	}
	st, err := stacktest.Start(stacktest.Config{
		DatabaseURL: dbURL, AMQPURL: amqpURL, InternalToken: internalToken, LogLevel: "error",
		Processes: []stacktest.Process{
			{Name: "user", Pkg: "./services/user/cmd/user", Health: "/readyz"},
			{Name: "agent-events", Pkg: "./services/user/cmd/agent-events", Health: "/readyz", Consumer: true},
			{Name: "order", Pkg: "./services/order/cmd/order", Health: "/readyz"},
			{Name: "lead-api", Pkg: "./services/lead/cmd/lead-api", Health: "/readyz", Env: apiEnv},
			{Name: "lead-worker", Pkg: "./services/lead/cmd/lead-worker", Health: "/readyz", Consumer: true, Env: workerEnv},
			// Not loaded by any phase; here so that figure (8) covers every binary.
			{Name: "call", Pkg: "./services/call/cmd/call", Health: "/readyz"},
			{Name: "call-ingest", Pkg: "./services/call/cmd/call-ingest", Health: "/readyz", Consumer: true},
			{Name: "notification-api", Pkg: "./services/notification/cmd/notification-api", Health: "/readyz"},
			{Name: "notification-worker", Pkg: "./services/notification/cmd/notification-worker", Health: "/readyz", Consumer: true},
			// The receivers of figure (7) listen on 127.0.0.1 over http.
			{Name: "webhook-api", Pkg: "./services/webhook/cmd/webhook-api", Health: "/readyz",
				Env: []string{"WEBHOOK_ALLOW_HTTP=true", "WEBHOOK_ALLOW_PRIVATE=true"}},
			{Name: "webhook-dispatcher", Pkg: "./services/webhook/cmd/webhook-dispatcher", Health: "/readyz", Consumer: true,
				Env: []string{"WEBHOOK_ALLOW_PRIVATE=true"}},
			{Name: "report", Pkg: "./services/report/cmd/report", Health: "/readyz"},
			{Name: "report-worker", Pkg: "./services/report/cmd/report-worker", Health: "/readyz", Consumer: true},
			// The live phase's 200 streams all use the stack's key: no bound on the streams per key.
			{Name: "gateway", Pkg: "./gateway/cmd/gateway", Health: "/readyz",
				Env: []string{"RATE_LIMIT_RPS=1000000", "RATE_LIMIT_BURST=1000000", "STREAMS_PER_KEY=0"}},
			// The same gateway's wiring without the route policy (a main of the bench's own), to
			// measure what authorization costs.
			{Name: "gateway-nopolicy", Pkg: "./scripts/bench/gateway-nopolicy", Health: "/readyz",
				Env: []string{"RATE_LIMIT_RPS=1000000", "RATE_LIMIT_BURST=1000000"}},
			// lead-api and the gateway built without request metrics, the gateway calling that
			// lead-api: what the metrics cost figure (1).
			{Name: "lead-api-nometrics", Pkg: "./services/lead/cmd/lead-api", Health: "/readyz", Tags: "benchnometrics"},
			{Name: "gateway-nometrics", Pkg: "./gateway/cmd/gateway", Health: "/readyz", Tags: "benchnometrics",
				Env:       []string{"RATE_LIMIT_RPS=1000000", "RATE_LIMIT_BURST=1000000"},
				Upstreams: map[string]string{"LEAD_URL": "lead-api-nometrics"}},
			// A bare publish server, and the same gateway in front of nothing but it: what figure
			// (2) could reach with a lead service that cost nothing.
			{Name: "barepublish", Pkg: "./scripts/bench/barepublish", Health: "/readyz"},
			{Name: "refgateway", Pkg: "./gateway/cmd/gateway", Health: "/readyz",
				Env:       []string{"RATE_LIMIT_RPS=1000000", "RATE_LIMIT_BURST=1000000"},
				Upstreams: map[string]string{"LEAD_URL": "barepublish"}},
		},
		Tools: stacktest.OperatorTools(),
	})
	if st != nil {
		defer st.Close()
	}
	if err != nil {
		if st != nil {
			st.DumpLogs(os.Stderr)
		}
		return fmt.Errorf("start stack: %w", err)
	}
	leads, err := db.Open(ctx, dbURL, "leads", 64)
	if err != nil {
		return err
	}
	defer leads.Close()

	b := &bench{cfg: cfg, out: out, stack: st, leads: leads, amqpURL: amqpURL,
		workerPprof: workerPprof, apiPprof: apiPprof, dbName: dbName(dbURL), dbURL: dbURL,
		api: loadtest.NewClient(st.BaseURL, cfg.Concurrency, map[string]string{"X-Api-Key": st.APIKey})}
	if err := b.machine(ctx); err != nil {
		return err
	}
	b.rssAtStart = map[string]int{}
	for name, m := range b.residentMemory() {
		b.rssAtStart[name] = m.rss
	}
	if err := b.createOrder(ctx); err != nil {
		return err
	}
	phases := []struct {
		name string
		run  func(context.Context) error
	}{{"sync", b.syncCreates}, {"async", b.asyncAndDrain}, {"import", b.imports}, {"list", b.list}, {"dialer", b.dialer},
		{"webhook", b.webhooks}, {"report", b.reports}, {"live", b.live}}
	for _, p := range phases {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !slices.Contains(selected, p.name) {
			continue
		}
		phase := p.run
		if err := phase(ctx); err != nil {
			return err
		}
	}
	b.memoryAfter()
	b.report()
	return nil
}

// dropDatabase drops the run's database with drop, and when PostgreSQL refuses (DROP DATABASE …
// WITH (FORCE) may not end a process of another role that is still on the database, such as an
// autovacuum worker busy with the tables the run just wrote), tries again for a minute.
func dropDatabase(name string, drop func() error) error {
	err := drop()
	for deadline := time.Now().Add(time.Minute); err != nil && time.Now().Before(deadline); {
		time.Sleep(2 * time.Second)
		err = func() error {
			admin, err := sqlx.Open("postgres", dbtest.BaseURL())
			if err != nil {
				return err
			}
			defer admin.Close()
			_, err = admin.Exec(`DROP DATABASE IF EXISTS "` + name + `" WITH (FORCE)`)
			return err
		}()
	}
	return err
}

// phaseNames are the phases in the order they run. import comes right after async, so that it
// writes into the same table as the drain it is compared with (before list and dialer load two
// million leads), and waits until lead-worker has settled its files, so that no backlog is left for
// the phases after it.
var phaseNames = []string{"sync", "async", "import", "list", "dialer", "webhook", "report", "live"}

// selectPhases reads -phases: known names only, and async whenever import (figure (3) is
// figure (6)'s baseline); addedAsync says that async was not asked for.
func selectPhases(list string) (out []string, addedAsync bool, err error) {
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(phaseNames, name) {
			return nil, false, fmt.Errorf("-phases: unknown phase %q (phases: %s)", name, strings.Join(phaseNames, ", "))
		}
		out = append(out, name)
	}
	if slices.Contains(out, "import") && !slices.Contains(out, "async") {
		out, addedAsync = append(out, "async"), true
	}
	return out, addedAsync, nil
}

// machine prints what the figures were measured on.
func (b *bench) machine(ctx context.Context) error {
	var pg string
	if err := b.leads.GetContext(ctx, &pg, `SHOW server_version`); err != nil {
		return fmt.Errorf("server version: %w", err)
	}
	model := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	fmt.Fprintf(b.out, "machine: %d cores (%s), %s, PostgreSQL %s; load generator on the same machine\n",
		runtime.NumCPU(), model, runtime.Version(), pg)
	fmt.Fprintf(b.out, "settings: c=%d, %s per phase, lead-worker WORKER_CONCURRENCY=%d draining ≥ %d jobs, %d import rows, %d leads for the list\n\n",
		b.cfg.Concurrency, b.cfg.Duration, b.cfg.WorkerConcurrency, b.cfg.DrainJobs, b.cfg.ImportRows, b.cfg.Rows)
	return nil
}

func (b *bench) createOrder(ctx context.Context) error {
	body := []byte(`{"serviceTitle":"bench","title":"Bench leads","status":"success","sipEndpointIds":[1]}`)
	var created struct {
		ID int64 `json:"id"`
	}
	if err := b.api.Do(ctx, "POST", "/v2/order/create/", body, &created); err != nil {
		return fmt.Errorf("create order: %w", err)
	}
	var detail struct {
		Code string `json:"code"`
	}
	if err := b.api.Do(ctx, "GET", fmt.Sprintf("/v2/order/detail/%d/", created.ID), nil, &detail); err != nil {
		return fmt.Errorf("read order: %w", err)
	}
	b.order, b.code = created.ID, detail.Code
	return nil
}

// report prints the table of every figure beside its baseline, with the ratio and the target.
func (b *bench) report() {
	fmt.Fprintf(b.out, "\n%-34s %-44s %-44s %7s  %-12s %s\n", "figure", "platform", "baseline", "ratio", "target", "result")
	for _, r := range b.rows {
		verdict := "FAIL"
		if r.pass {
			verdict = "PASS"
		}
		fmt.Fprintf(b.out, "%-34s %-44s %-44s %7.2f  %-12s %s\n", r.name, r.platform, r.baseline, r.ratio, r.target, verdict)
	}
}

func dbName(u string) string {
	name := u[strings.LastIndex(u, "/")+1:]
	if i := strings.IndexByte(name, '?'); i >= 0 {
		name = name[:i]
	}
	return name
}
