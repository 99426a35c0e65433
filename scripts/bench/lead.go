package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"ccplatform/gateway/e2e/loadtest"
	"ccplatform/pkg/freeport"
	"ccplatform/pkg/mq"

	"github.com/google/uuid"
	"go.uber.org/zap"
)

// phone is a distinct valid number per call, so no create waits on another's secondary-lead lock.
func (b *bench) phone() string {
	return fmt.Sprintf("7916%07d", atomic.AddInt64(&b.phoneSeq, 1))
}

func (b *bench) leadBody() []byte {
	return fmt.Appendf(nil, `{"leadType":"straight","phone":%q,"orderId":%d,"orderCode":%q,"name":"Bench client","sourceComment":"bench"}`,
		b.phone(), b.order, b.code)
}

// warm runs op briefly so that connection pools and caches are filled before a measurement.
func (b *bench) warm(op func(i int) error) Result {
	return Load(b.cfg.Concurrency, 2*time.Second, 200, op)
}

// syncCreates is figure (1): sync creates through the gateway vs a bare server that does one
// INSERT per request into the same table, at the same concurrency.
func (b *bench) syncCreates(ctx context.Context) error {
	fmt.Fprintln(b.out, "(1) sync create: gateway → lead-api vs bare net/http one-INSERT server, a webhook endpoint subscribed to the lead events")
	// The platform's creates are measured as a partner runs them: with a webhook subscription that
	// gets every lead event, so its fan-out and deliveries share the machine with the creates
	// (the receiver answers at once, in this process).
	recv, err := startReceiver()
	if err != nil {
		return err
	}
	defer recv.close()
	sub, _, err := b.subscribe(ctx, fmt.Sprintf("http://%s/leads", recv.addr), "lead.created", "lead.updated", "lead.status_changed")
	if err != nil {
		return err
	}
	defer func() {
		_ = b.api.Do(ctx, "POST", fmt.Sprintf("/v2/webhook/delete/%d/", sub), nil, nil)
		fmt.Fprintf(b.out, "    the subscribed endpoint received %d lead events\n", recv.count.Load())
	}()
	create := func(int) error { return b.api.Do(ctx, "POST", "/v2/lead/create/", b.leadBody(), nil) }
	b.warm(create)
	profiled := func() error { return nil }
	if b.cfg.CreateProfile != "" {
		profiled = b.profileCPU(ctx, "lead-api", b.apiPprof, b.cfg.Duration, b.cfg.CreateProfile, "the measured sync creates,")
	}
	before := b.cpuShares()
	platform := Load(b.cfg.Concurrency, b.cfg.Duration, 0, create)
	fmt.Fprintf(b.out, "    CPU per create, by process: %s\n", perShare(before, b.cpuShares(), platform.OK))
	if err := profiled(); err != nil {
		return err
	}
	b.direct(ctx, "/v2/lead/create")
	alone, err := b.withoutConsumers(func() Result { return Load(b.cfg.Concurrency, b.cfg.Duration, 0, create) })
	if err != nil {
		return err
	}

	// The same creates through the gateway built without the route policy, right after: what
	// authorization costs the figure.
	open := loadtest.NewClient(b.stack.URL("gateway-nopolicy"), b.cfg.Concurrency, map[string]string{"X-Api-Key": b.stack.APIKey})
	openCreate := func(int) error { return open.Do(ctx, "POST", "/v2/lead/create/", b.leadBody(), nil) }
	b.warm(openCreate)
	noPolicy := Load(b.cfg.Concurrency, b.cfg.Duration, 0, openCreate)
	fmt.Fprintf(b.out, "    platform, policy off %s\n", noPolicy.Summary())
	b.add(fmt.Sprintf("(1a) policy on/off c=%d", b.cfg.Concurrency), platform, noPolicy, platform.Rate()/noPolicy.Rate(), "≥ 0.95", 0.95)
	if err := b.metricsCost(ctx, create); err != nil {
		return err
	}

	bare, stop, err := b.bareServer(b.cfg.Concurrency)
	if err != nil {
		return err
	}
	defer stop()
	bareCreate := func(int) error { return bare.Do(ctx, "POST", "/", b.leadBody(), nil) }
	b.warm(bareCreate)
	before = b.cpuShares()
	baseline := Load(b.cfg.Concurrency, b.cfg.Duration, 0, bareCreate)
	fmt.Fprintf(b.out, "    baseline: CPU per create, by process (the bare server is the load client's): %s\n", perShare(before, b.cpuShares(), baseline.OK))
	b.add(fmt.Sprintf("(1) sync creates/s c=%d", b.cfg.Concurrency), platform, baseline, platform.Rate()/baseline.Rate(), "≥ 0.60", 0.60)
	b.p99(fmt.Sprintf("(1) sync p99 c=%d", b.cfg.Concurrency), platform, baseline)
	fmt.Fprintf(b.out, "    the request's path alone (the events' consumers paused): %.2f of the baseline\n", alone.Rate()/baseline.Rate())
	return b.syncCreatesWide(ctx)
}

// eventConsumers are the processes that consume the lead events on this stack, and eventQueues
// their queues (webhook-dispatcher's fan-out, report-worker's ingest).
var (
	eventConsumers = []string{"webhook-dispatcher", "report-worker"}
	eventQueues    = []string{"webhook.events", "report.events"}
)

// withoutConsumers runs load with the lead events' consumers paused (SIGSTOP, then SIGCONT: their
// messages wait in their queues and are consumed afterwards), printing its figures and CPU per
// operation: the platform's own path alone, as on a deployment whose consumers run on other
// machines. No target; it tells the events' share of figures (1) and (3). It returns once the
// consumers caught up with what they were paused over, so that the next measurement does not pay
// for it.
func (b *bench) withoutConsumers(load func() Result) (Result, error) {
	signal := func(sig syscall.Signal) error {
		for _, name := range eventConsumers {
			if err := syscall.Kill(b.stack.PID(name), sig); err != nil {
				return fmt.Errorf("%s %s: %w", sig, name, err)
			}
		}
		return nil
	}
	if err := signal(syscall.SIGSTOP); err != nil {
		return Result{}, err
	}
	before := b.cpuShares()
	res := load()
	after := b.cpuShares()
	if err := signal(syscall.SIGCONT); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(b.out, "    the events' consumers paused %s\n      CPU per operation, by process: %s\n", res.Summary(), perShare(before, after, res.OK))
	return res, b.settle()
}

// settle waits until the lead events' queues are empty.
func (b *bench) settle() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn := mq.Dial(b.amqpURL, "bench-settle", zap.NewNop())
	defer conn.Close()
	if err := conn.Wait(ctx); err != nil {
		return err
	}
	for {
		waiting := 0
		for _, q := range eventQueues {
			_, n, err := conn.QueueConsumers(ctx, q)
			if err != nil {
				return fmt.Errorf("the events' consumers catching up: %w", err)
			}
			waiting += n
		}
		if waiting == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the events' consumers did not catch up in 3 minutes (%d messages left)", waiting)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// syncWide is the second concurrency of figure (1): the many connections a new user's load tool
// opens, where waiting on locks and the pool shows more than at 16.
const syncWide = 64

// syncCreatesWide is figure (1) at syncWide connections: the platform and the bare one-INSERT
// server, each with clients of that many connections.
func (b *bench) syncCreatesWide(ctx context.Context) error {
	api := loadtest.NewClient(b.stack.BaseURL, syncWide, map[string]string{"X-Api-Key": b.stack.APIKey})
	create := func(int) error { return api.Do(ctx, "POST", "/v2/lead/create/", b.leadBody(), nil) }
	Load(syncWide, 2*time.Second, 0, create)
	before := b.cpuShares()
	platform := Load(syncWide, b.cfg.Duration, 0, create)
	fmt.Fprintf(b.out, "    c=%d: CPU per create, by process: %s\n", syncWide, perShare(before, b.cpuShares(), platform.OK))
	bare, stop, err := b.bareServer(syncWide)
	if err != nil {
		return err
	}
	defer stop()
	bareCreate := func(int) error { return bare.Do(ctx, "POST", "/", b.leadBody(), nil) }
	Load(syncWide, 2*time.Second, 0, bareCreate)
	before = b.cpuShares()
	baseline := Load(syncWide, b.cfg.Duration, 0, bareCreate)
	fmt.Fprintf(b.out, "    c=%d baseline: CPU per create, by process (the bare server is the load client's): %s\n", syncWide, perShare(before, b.cpuShares(), baseline.OK))
	b.add(fmt.Sprintf("(1) sync creates/s c=%d", syncWide), platform, baseline, platform.Rate()/baseline.Rate(), "≥ 0.60", 0.60)
	b.p99(fmt.Sprintf("(1) sync p99 c=%d", syncWide), platform, baseline)
	return nil
}

// p99 is a row of the platform's p99 against the baseline's: at most twice.
func (b *bench) p99(name string, platform, baseline Result) {
	p, q := platform.Percentile(0.99), baseline.Percentile(0.99)
	ratio := float64(p) / float64(max(q, 1))
	b.rows = append(b.rows, row{name: name, platform: fmt.Sprintf("p99 %.2fms", loadtest.Millis(p)),
		baseline: fmt.Sprintf("p99 %.2fms", loadtest.Millis(q)), ratio: ratio, target: "≤ 2.00", pass: ratio <= 2})
}

// metricsCost is figure (1b): sync creates through the real gateway and lead-api against the same
// through their builds without request metrics (gateway-nometrics → lead-api-nometrics), in
// alternating rounds so that the machine's drift falls on both alike.
func (b *bench) metricsCost(ctx context.Context, create func(int) error) error {
	bare := loadtest.NewClient(b.stack.URL("gateway-nometrics"), b.cfg.Concurrency, map[string]string{"X-Api-Key": b.stack.APIKey})
	bareCreate := func(int) error { return bare.Do(ctx, "POST", "/v2/lead/create/", b.leadBody(), nil) }
	b.warm(bareCreate)
	on, off, err := b.alternate(create, bareCreate, "metrics on", "metrics off")
	if err != nil {
		return err
	}
	// CPU time per request of the two processes a create crosses: steadier than throughput on a
	// shared machine, since it does not depend on what else runs meanwhile.
	perOn := (on.cpu["gateway"] + on.cpu["lead-api"]) / time.Duration(max(on.OK, 1))
	perOff := (off.cpu["gateway-nometrics"] + off.cpu["lead-api-nometrics"]) / time.Duration(max(off.OK, 1))
	fmt.Fprintf(b.out, "    metrics on/off: gateway+lead-api CPU per create: on %s, off %s (%.3f)\n", perOn, perOff, float64(perOn)/float64(perOff))
	b.add(fmt.Sprintf("(1b) metrics on/off c=%d", b.cfg.Concurrency), on.Result, off.Result, on.Rate()/off.Rate(), "≥ 0.95", 0.95)
	return nil
}

// processCPU is the CPU time a process used so far (utime + stime of /proc/<pid>/stat).
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces, inside parentheses): state is the
	// 3rd field of the line, utime the 14th and stime the 15th.
	rest := raw[bytes.LastIndexByte(raw, ')')+2:]
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	// Clock ticks are 1/100 s on Linux (USER_HZ; sysconf(_SC_CLK_TCK) is 100 on every
	// architecture Go supports there).
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// direct measures path on lead-api itself, as the gateway calls it, to tell the gateway's share
// of a figure from the service's (printed only, no target). It returns how many requests
// succeeded, warm-up included.
func (b *bench) direct(ctx context.Context, path string) int {
	api := b.leadAPI("lead-api")
	op := func(int) error { return api.Do(ctx, "POST", path, b.leadBody(), nil) }
	warm := Load(b.cfg.Concurrency, time.Second, 100, op)
	res := Load(b.cfg.Concurrency, b.cfg.Duration, 0, op)
	fmt.Fprintf(b.out, "    lead-api alone (no gateway) %s\n", res.Summary())
	return warm.OK + res.OK
}

// bareServer is the baseline of figure (1): net/http, decode, one INSERT, an envelope back.
func (b *bench) bareServer(clients int) (*loadtest.Client, func(), error) {
	addr, err := freeport.Addr()
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("bare server: %w", err)
	}
	const q = `INSERT INTO leads (order_id, order_code, phone, name, source_comment, status_id, lead_type, create_method)
VALUES ($1, $2, $3, $4, $5, 1, $6, 'api_v2') RETURNING id`
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			LeadType      string `json:"leadType"`
			Phone         string `json:"phone"`
			OrderID       int64  `json:"orderId"`
			OrderCode     string `json:"orderCode"`
			Name          string `json:"name"`
			SourceComment string `json:"sourceComment"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var id int64
		if err := b.leads.QueryRowContext(r.Context(), q, in.OrderID, in.OrderCode, "+"+in.Phone, in.Name, in.SourceComment, in.LeadType).Scan(&id); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"success":true,"message":"","data":{"id":%d}}`, id)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return loadtest.NewClient("http://"+addr, clients, nil), func() { _ = srv.Close() }, nil
}

// asyncAndDrain is figures (2) and (3). With lead-worker stopped, async accepts through the
// gateway fill the queue, against a bare loop of confirmed publishes to a quorum queue at the same
// concurrency; then lead-worker starts and drains what was accepted, against single-row INSERT
// transactions into the same table over as many connections as the worker has.
func (b *bench) asyncAndDrain(ctx context.Context) error {
	fmt.Fprintln(b.out, "(2) async accept: gateway → lead-api → confirmed publish vs bare confirmed-publish loop")
	b.stack.Stop("lead-worker", syscall.SIGTERM)
	accept := func(int) error {
		var d struct {
			JobID string `json:"jobId"`
		}
		return b.api.Do(ctx, "POST", "/v2/lead/create-async/", b.leadBody(), &d)
	}
	// Jobs are counted as accepted, not as queued messages: lead-api groups several in a message.
	queued := b.warm(accept).OK
	profiled := func() error { return nil }
	if b.cfg.AcceptProfile != "" {
		profiled = b.profileCPU(ctx, "lead-api", b.apiPprof, b.cfg.Duration, b.cfg.AcceptProfile, "the measured accepts,")
	}
	before := b.cpuShares()
	platform := Load(b.cfg.Concurrency, b.cfg.Duration, 0, accept)
	fmt.Fprintf(b.out, "    CPU per accept, by process: %s\n", perShare(before, b.cpuShares(), platform.OK))
	if err := profiled(); err != nil {
		return err
	}
	queued += platform.OK
	queued += b.direct(ctx, "/v2/lead/create-async")

	conn := mq.Dial(b.amqpURL, "bench-bare", zap.NewNop(), mq.WorkQueue("bench.bare"))
	defer conn.Close()
	if err := conn.Wait(ctx); err != nil {
		return err
	}
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	publish := func(int) error {
		id := uuid.NewString()
		body := fmt.Appendf(nil, `{"jobId":%q,"version":"v2","createMethod":"api_v2_async","body":%s,"callerUserId":1}`, id, b.leadBody())
		return pub.Publish(ctx, "", "bench.bare", mq.Message{ID: id, Type: "lead.create", Body: body})
	}
	b.warm(publish)
	baseline := Load(b.cfg.Concurrency, b.cfg.Duration, 0, publish)
	behind, err := b.httpPublishCeiling(ctx, baseline)
	if err != nil {
		return err
	}
	b.add(fmt.Sprintf("(2) async accepted/s c=%d", b.cfg.Concurrency), platform, baseline, platform.Rate()/baseline.Rate(), "≥ 0.70", 0.70)
	// The zero-cost reference: the bare publish server behind the real gateway, so that only
	// lead-api's own work per accept separates the two. Measured one after the other, the two
	// moved from 0.56 to 1.05 between runs of the same code as the machine's other load came and
	// went; alternating rounds put that drift on both alike.
	plat, ref, err := b.alternate(accept, behind, "platform", "reference")
	if err != nil {
		return err
	}
	queued += plat.OK
	b.add(fmt.Sprintf("(2) async vs bare publish server behind the gateway c=%d, alternating", b.cfg.Concurrency), plat.Result, ref.Result,
		plat.Rate()/ref.Rate(), "≥ 0.90", 0.90)

	fmt.Fprintln(b.out, "(3) drain: lead-worker vs single-row INSERT transactions")
	if queued < b.cfg.DrainJobs {
		// A drain of a few thousand jobs lasts a fraction of a second: queue enough (through the
		// same route, not measured) that the rate means something.
		top := Load(b.cfg.Concurrency, 5*time.Minute, b.cfg.DrainJobs-queued, accept)
		if top.Errors > 0 {
			return fmt.Errorf("queue jobs for the drain: %w", top.FirstErr)
		}
		queued += top.OK
	}
	drained, err := b.drain(ctx, 0, queued)
	if err != nil {
		return err
	}
	b.drained = drained
	const q = `INSERT INTO leads (order_id, order_code, phone, name, source_comment, status_id, lead_type, create_method, job_id)
VALUES ($1, $2, $3, 'Bench client', 'bench', 1, 'straight', 'api_v2_async', $4)`
	insert := func(int) error {
		_, err := b.leads.ExecContext(ctx, q, b.order, b.code, "+"+b.phone(), uuid.NewString())
		return err
	}
	Load(b.cfg.WorkerConcurrency, time.Second, 0, insert)
	inserts := Load(b.cfg.WorkerConcurrency, b.cfg.Duration, 0, insert)
	ratio := drained.Rate() / inserts.Rate()
	b.rows = append(b.rows, row{
		name:     fmt.Sprintf("(3) drained/s (%d jobs)", drained.OK),
		platform: fmt.Sprintf("%8.0f/s in %.1fs", drained.Rate(), drained.Elapsed.Seconds()),
		baseline: fmt.Sprintf("%s c=%d", inserts.Summary(), b.cfg.WorkerConcurrency),
		ratio:    ratio, target: "≥ 3.00", pass: ratio >= 3,
	})
	fmt.Fprintf(b.out, "    drained %d jobs at %.0f/s; single-row INSERT %s\n", drained.OK, drained.Rate(), inserts.Summary())
	return b.drainWithoutConsumers(ctx, accept, inserts)
}

// drainWithoutConsumers is figure (3) again with the lead events' consumers paused: the drain of a
// deployment whose consumers run on other machines. No target; it tells the consumers' share of
// (3).
func (b *bench) drainWithoutConsumers(ctx context.Context, accept func(int) error, inserts Result) error {
	b.stack.Stop("lead-worker", syscall.SIGTERM)
	more := Load(b.cfg.Concurrency, 5*time.Minute, b.cfg.DrainJobs, accept)
	if more.Errors > 0 {
		return fmt.Errorf("queue jobs for the drain without the consumers: %w", more.FirstErr)
	}
	base, err := b.outcomes(ctx)
	if err != nil {
		return err
	}
	var drained Result
	var drainErr error
	if _, err := b.withoutConsumers(func() Result {
		drained, drainErr = b.drain(ctx, base, base+more.OK)
		return drained
	}); err != nil {
		return err
	}
	if drainErr != nil {
		return drainErr
	}
	fmt.Fprintf(b.out, "    the drain without the events' consumers: %d jobs at %.0f/s, %.2f of the single-row INSERT rate\n",
		drained.OK, drained.Rate(), drained.Rate()/inserts.Rate())
	return nil
}

// httpPublishCeiling is two references for figure (2): the same confirmed publishes, each behind
// one request to a bare net/http server of its own process (barepublish: no body check, one
// message per request), called directly and through a second gateway whose lead upstream is that
// server. The first is what any HTTP accept can reach on this machine; the second what the
// platform's async route could reach if the lead service cost nothing. Together they tell how much
// of the gap to the bare publish loop is HTTP, how much the gateway hop, and how much lead-api. It
// returns the second as an operation.
func (b *bench) httpPublishCeiling(ctx context.Context, loop Result) (func(int) error, error) {
	refs := []struct {
		name   string
		client *loadtest.Client
		path   string
	}{
		{"bare HTTP server + confirmed publish", loadtest.NewClient(b.stack.URL("barepublish"), b.cfg.Concurrency, nil), "/"},
		{"the same behind the gateway", loadtest.NewClient(b.stack.URL("refgateway"), b.cfg.Concurrency,
			map[string]string{"X-Api-Key": b.stack.APIKey}), "/v2/lead/create-async/"},
	}
	var last func(int) error
	for _, ref := range refs {
		op := func(int) error { return ref.client.Do(ctx, "POST", ref.path, b.leadBody(), nil) }
		b.warm(op)
		before := b.cpuShares()
		res := Load(b.cfg.Concurrency, b.cfg.Duration, 0, op)
		if res.Errors > 0 {
			return nil, fmt.Errorf("reference %q: %w", ref.name, res.FirstErr)
		}
		fmt.Fprintf(b.out, "    reference: %s %s (%.2f of the bare publish loop)\n", ref.name, res.Summary(), res.Rate()/loop.Rate())
		fmt.Fprintf(b.out, "      CPU per accept, by process: %s\n", perShare(before, b.cpuShares(), res.OK))
		last = op
	}
	// The last reference is the one behind the gateway.
	return last, nil
}

// measured is the result of a side of an alternating measurement, with the CPU time each
// process of the machine spent meanwhile (cpuShares).
type measured struct {
	Result
	cpu map[string]time.Duration
}

// alternate measures a against c in alternating rounds of half a phase each, a first in even
// rounds and c first in odd ones, so that the machine's drift over the rounds falls on both alike,
// and prints each round's ratio and each side's CPU per operation by process.
func (b *bench) alternate(a, c func(int) error, aName, cName string) (measured, measured, error) {
	const rounds = 4
	ma, mc := measured{cpu: map[string]time.Duration{}}, measured{cpu: map[string]time.Duration{}}
	var ratios []string
	measure := func(op func(int) error, into *measured) error {
		before := b.cpuShares()
		res := Load(b.cfg.Concurrency, b.cfg.Duration/2, 0, op)
		if res.Errors > 0 {
			return res.FirstErr
		}
		for k, v := range b.cpuShares() {
			into.cpu[k] += v - before[k]
		}
		into.Result = into.Merge(res)
		return nil
	}
	for i := range rounds {
		a0, c0 := ma.Result, mc.Result
		first, second := func() error { return measure(a, &ma) }, func() error { return measure(c, &mc) }
		if i%2 == 1 {
			first, second = second, first
		}
		if err := first(); err != nil {
			return ma, mc, fmt.Errorf("alternating round %d: %w", i+1, err)
		}
		if err := second(); err != nil {
			return ma, mc, fmt.Errorf("alternating round %d: %w", i+1, err)
		}
		rate := func(now, then Result) float64 {
			return float64(now.OK-then.OK) / (now.Elapsed - then.Elapsed).Seconds()
		}
		ratios = append(ratios, fmt.Sprintf("%.2f", rate(ma.Result, a0)/rate(mc.Result, c0)))
	}
	fmt.Fprintf(b.out, "    %d alternating rounds of %s, %s ÷ %s by round: %s\n", rounds, b.cfg.Duration/2, aName, cName, strings.Join(ratios, " "))
	fmt.Fprintf(b.out, "      CPU per operation, %s: %s\n", aName, perShare(nil, ma.cpu, ma.OK))
	fmt.Fprintf(b.out, "      CPU per operation, %s: %s\n", cName, perShare(nil, mc.cpu, mc.OK))
	return ma, mc, nil
}

// drain starts lead-worker and times it from its first recorded outcome beyond base to the last of want jobs
// (process start-up is not the worker's throughput).
func (b *bench) drain(ctx context.Context, base, want int) (Result, error) {
	if err := b.stack.Start("lead-worker"); err != nil {
		return Result{}, err
	}
	var first time.Time
	var atFirst int
	var cpu0 cpuUse
	var shares0 map[string]time.Duration
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		n, err := b.outcomes(ctx)
		if err != nil {
			return Result{}, err
		}
		if n > base && first.IsZero() {
			first, atFirst = time.Now(), n
			if cpu0, err = b.cpuNow(); err != nil {
				return Result{}, err
			}
			shares0 = b.cpuShares()
		}
		if n >= want {
			res := Result{OK: n - atFirst, Elapsed: time.Since(first)}
			// Printed beside figure (6), whose rows go through the same lead-worker and tables.
			cpu1, err := b.cpuNow()
			if err != nil {
				return Result{}, err
			}
			fmt.Fprintf(b.out, "    drain, %s\n", cpu0.perItem(cpu1, res.OK, res.Elapsed))
			fmt.Fprintf(b.out, "    drain, CPU per job by process: %s\n", perShare(shares0, b.cpuShares(), res.OK))
			return res, nil
		}
		// Counting the outcomes reads the whole of lead_jobs, 3-5 ms once it holds 100,000 rows:
		// counted every 20 ms it took a sixth to a third of a core from the drain it measured
		// (pg_stat_statements). The start needs no precision (the rate counts from the outcomes
		// seen then), the end does.
		pause := 250 * time.Millisecond
		if n >= base+(want-base)*9/10 {
			pause = 20 * time.Millisecond
		}
		time.Sleep(pause)
	}
	return Result{}, errors.New("lead-worker did not drain the queue in 3 minutes")
}

// Figure (4) reads exactly what the lead service's store runs for the list page: the count, then
// the page (services/lead/internal/lead/store.go, Store.List with one order and a period).
const (
	listColumns = `id, order_id, order_code, phone, name, source_comment, ip, external_id_crm_a, external_id_crm_b,
external_id_crm_c, external_id_crm_d, status_id, lead_type, create_method, source, ad_campaign_id, is_secondary,
previous_lead_id, next_lead_id, planning_call_at, priority, utc_offset, social_network_id, social_login,
messenger_user_name, messenger_phone, messenger_id, custom_values, job_id, created_by, created_at, updated_at`
	listWhere = ` FROM leads WHERE order_id = $1 AND created_at >= $2 AND created_at < $3`
	listCount = `SELECT count(*)` + listWhere
	listPage  = `SELECT ` + listColumns + listWhere + ` ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`
)

// listOrders is how many orders share the bulk-loaded leads: one of them is the one listed.
const listOrders = 4

// list is figure (4): the list page over cfg.Rows leads of a few orders spread over a year.
func (b *bench) list(ctx context.Context) error {
	fmt.Fprintf(b.out, "(4) list page: bulk-loading %d leads over a year for %d orders\n", b.cfg.Rows, listOrders)
	start := time.Now()
	const load = `
INSERT INTO leads (order_id, order_code, phone, status_id, lead_type, create_method, created_at, updated_at)
SELECT CASE WHEN g % $4 = 0 THEN $1 ELSE 900000 + g % $4 END, $2,
       '+7915' || lpad((g % 10000000)::text, 7, '0'), 1, 'straight', 'import',
       now() - interval '365 days' * (g::float8 / $3), now() - interval '365 days' * (g::float8 / $3)
FROM generate_series(1, $3) AS g`
	if _, err := b.leads.ExecContext(ctx, load, b.order, b.code, b.cfg.Rows, listOrders); err != nil {
		return fmt.Errorf("bulk load: %w", err)
	}
	if _, err := b.leads.ExecContext(ctx, `VACUUM ANALYZE leads`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	fmt.Fprintf(b.out, "    loaded and vacuumed in %.1fs\n", time.Since(start).Seconds())

	month := time.Now().UTC().AddDate(0, -6, 0)
	from := time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0).Add(-time.Second) // the last second of the month, inclusive
	q := url.Values{}
	q.Set("orderIds[]", fmt.Sprint(b.order))
	q.Set("createdAt[0]", from.Format(time.RFC3339))
	q.Set("createdAt[1]", to.Format(time.RFC3339))
	q.Set("limit", "50")
	path := "/v2/lead/?" + q.Encode()
	var page struct {
		List  []json.RawMessage `json:"list"`
		Total int               `json:"total"`
	}
	if err := b.api.Do(ctx, "GET", path, nil, &page); err != nil {
		return err
	}
	fmt.Fprintf(b.out, "    GET %s → %d of total %d\n", path, len(page.List), page.Total)
	get := func(int) error { return b.api.Do(ctx, "GET", path, nil, nil) }
	Load(1, 2*time.Second, 50, get)
	platform := Load(1, time.Minute, b.cfg.ListRequests, get)

	// The store's upper bound is the inclusive second plus a nanosecond (half-open period).
	upper := to.Add(time.Nanosecond)
	direct := func(int) error {
		var n int
		if err := b.leads.GetContext(ctx, &n, listCount, b.order, from, upper); err != nil {
			return err
		}
		rows, err := b.leads.QueryContext(ctx, listPage, b.order, from, upper, 50, 0)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
	Load(1, 2*time.Second, 50, direct)
	baseline := Load(1, time.Minute, b.cfg.ListRequests, direct)
	p99 := platform.Percentile(0.99)
	b.rows = append(b.rows, row{
		name:     fmt.Sprintf("(4) list p99 (%d leads, c=1)", b.cfg.Rows),
		platform: platform.Summary(),
		baseline: baseline.Summary() + " (SQL)",
		ratio:    loadtest.Millis(p99) / loadtest.Millis(baseline.Percentile(0.99)),
		target:   "p99 < 25 ms", pass: p99 < 25*time.Millisecond,
	})
	fmt.Fprintf(b.out, "    gateway %s; the two queries alone %s\n", platform.Summary(), baseline.Summary())
	for _, e := range []struct {
		name, sql string
		args      []any
	}{
		{"count", listCount, []any{b.order, from, upper}},
		{"page", listPage, []any{b.order, from, upper, 50, 0}},
	} {
		var plan []string
		if err := b.leads.SelectContext(ctx, &plan, `EXPLAIN (ANALYZE, BUFFERS) `+e.sql, e.args...); err != nil {
			return fmt.Errorf("explain %s: %w", e.name, err)
		}
		fmt.Fprintf(b.out, "    EXPLAIN (ANALYZE, BUFFERS) %s query:\n      %s\n", e.name, strings.Join(plan, "\n      "))
	}
	return nil
}

// add records a throughput figure (higher is better) against its baseline.
func (b *bench) add(name string, platform, baseline Result, ratio float64, target string, min float64) {
	fmt.Fprintf(b.out, "    platform %s\n    baseline %s\n", platform.Summary(), baseline.Summary())
	b.rows = append(b.rows, row{name: name, platform: platform.Summary(), baseline: baseline.Summary(),
		ratio: ratio, target: target, pass: ratio >= min && platform.Errors == 0})
}

// leadAPI is a client of a lead-api process of the stack, called as the gateway calls it (the
// internal token and the demo admin as the caller).
func (b *bench) leadAPI(process string) *loadtest.Client {
	return loadtest.NewClient(b.stack.URL(process), b.cfg.Concurrency,
		map[string]string{"X-Internal-Token": internalToken, "X-User-Id": "1", "X-Access-Group": "admin"})
}

// outcomes is how many async jobs have their outcome recorded.
func (b *bench) outcomes(ctx context.Context) (int, error) {
	var n int
	if err := b.leads.GetContext(ctx, &n, `SELECT count(*) FROM lead_jobs`); err != nil {
		return 0, fmt.Errorf("count outcomes: %w", err)
	}
	return n, nil
}
