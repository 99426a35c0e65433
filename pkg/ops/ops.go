// Package ops serves what operators and orchestrators ask of every process: /livez (the process
// runs), /readyz (it can do its work now) and /metrics (Prometheus), and keeps the registry the
// process's metrics live in. docs/operations.md is the contract.
package ops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ccplatform/pkg/buildinfo"
	"ccplatform/pkg/httpserver"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// Check reports whether one thing the process needs works now; nil means it does.
type Check func(ctx context.Context) error

// checkTimeout bounds each readiness check: an orchestrator's probe gives up after a few seconds,
// and a check that hangs must read as "not ready", not as a probe timeout.
const checkTimeout = time.Second

// Ops is one process's operations surface. Use New.
type Ops struct {
	name string
	// Registry holds every metric of the process; packages register their collectors here.
	Registry *prometheus.Registry

	mu     sync.Mutex
	checks map[string]Check
	// degradations are the checks whose failure alone leaves the process running but stuck
	// (AddDegradation): /readyz says "degraded" rather than "not ready".
	degradations map[string]bool
	draining     atomic.Bool

	httpOnce sync.Once
	http     *httpMetrics
}

// New makes the surface of the binary called name, with the Go runtime, process and build
// collectors registered.
func New(name string) *Ops {
	o := &Ops{name: name, Registry: prometheus.NewRegistry(), checks: map[string]Check{}, degradations: map[string]bool{}}
	o.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "app_build_info",
			Help:        "Always 1; the labels name the build.",
			ConstLabels: prometheus.Labels{"version": buildinfo.Version, "goversion": runtime.Version()},
		}, func() float64 { return 1 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "app_ready",
			Help: "1 when /readyz would answer 200 at scrape time, else 0.",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*checkTimeout)
			defer cancel()
			if _, ok := o.Ready(ctx); ok {
				return 1
			}
			return 0
		}),
	)
	return o
}

// Name is the binary's name.
func (o *Ops) Name() string { return o.name }

// AddCheck adds a readiness check; a second check of the same name replaces the first.
func (o *Ops) AddCheck(name string, c Check) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.checks[name] = c
	delete(o.degradations, name)
}

// AddDegradation adds a readiness check whose failure means the process works but is stuck (a
// consumer holding a delivery past its bound): /readyz answers 503 all the same, with the status
// "degraded" when no other check failed, so that the answer tells a stuck process from one that
// cannot reach what it needs.
func (o *Ops) AddDegradation(name string, c Check) {
	o.AddCheck(name, c)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.degradations[name] = true
}

// Database adds the database's readiness check (a ping) and its connection pool's metrics
// (go_sql_*, labelled db_name=the binary's name).
func (o *Ops) Database(db *sql.DB) {
	o.Registry.MustRegister(collectors.NewDBStatsCollector(db, o.name))
	o.AddCheck("database", func(ctx context.Context) error {
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("unreachable: %w", err)
		}
		return nil
	})
}

// Drain marks the process as stopping: from now on /readyz answers 503, so load balancers and
// orchestrators stop sending it work while it finishes what it has.
func (o *Ops) Drain() { o.draining.Store(true) }

// Draining reports whether Drain was called.
func (o *Ops) Draining() bool { return o.draining.Load() }

// Readiness is the answer of /readyz.
type Readiness struct {
	Status string            `json:"status"` // ready, degraded, not ready, draining
	Checks map[string]string `json:"checks"` // check name → "ok" or what failed
}

// Ready runs every check (in parallel, each bounded) and reports whether all passed and the
// process is not draining.
func (o *Ops) Ready(ctx context.Context) (Readiness, bool) {
	o.mu.Lock()
	names := make([]string, 0, len(o.checks))
	checks := make([]Check, 0, len(o.checks))
	degradation := make([]bool, 0, len(o.checks))
	for n := range o.checks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		checks = append(checks, o.checks[n])
		degradation = append(degradation, o.degradations[n])
	}
	o.mu.Unlock()

	results := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			results[i] = c(cctx)
		})
	}
	wg.Wait()
	r := Readiness{Status: "ready", Checks: make(map[string]string, len(names))}
	for i, n := range names {
		r.Checks[n] = "ok"
		switch {
		case results[i] == nil:
		case degradation[i] && r.Status == "ready":
			r.Checks[n] = results[i].Error()
			r.Status = "degraded"
		default:
			r.Checks[n] = results[i].Error()
			r.Status = "not ready"
		}
	}
	if o.Draining() {
		r.Status = "draining"
	}
	return r, r.Status == "ready"
}

// Liveness is the answer of /livez.
type Liveness struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// Probes registers GET /livez and GET /readyz on r. Both answer in the platform's envelope.
func (o *Ops) Probes(r gin.IRoutes) {
	r.GET("/livez", func(c *gin.Context) {
		web.OK(c, Liveness{Status: "ok", Version: buildinfo.Version})
	})
	r.GET("/readyz", func(c *gin.Context) {
		rd, ok := o.Ready(c.Request.Context())
		if ok {
			web.OK(c, rd)
			return
		}
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, web.Envelope{Message: notReadyMessage(rd), Data: rd})
	})
}

// notReadyMessage names what is wrong: "draining" or "not ready: database: unreachable: …".
func notReadyMessage(r Readiness) string {
	var failed []string
	for n, v := range r.Checks {
		if v != "ok" {
			failed = append(failed, n+": "+v)
		}
	}
	sort.Strings(failed)
	if len(failed) == 0 {
		return r.Status
	}
	return r.Status + ": " + strings.Join(failed, "; ")
}

// Routes registers /livez, /readyz and GET /metrics on r.
func (o *Ops) Routes(r gin.IRoutes) {
	o.Probes(r)
	r.GET("/metrics", gin.WrapH(o.MetricsHandler()))
}

// MetricsHandler serves the registry in Prometheus's text (or OpenMetrics) format.
func (o *Ops) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{Registry: o.Registry})
}

// Handler serves the three endpoints alone: the listener of a worker, which has no other routes,
// and the gateway's private metrics listener.
func (o *Ops) Handler() http.Handler {
	if gin.Mode() != gin.ReleaseMode {
		gin.SetMode(gin.ReleaseMode) // debug mode only prints warnings to the process's log
	}
	e := gin.New()
	e.Use(gin.Recovery())
	o.Routes(e)
	e.NoRoute(func(c *gin.Context) {
		c.AbortWithStatusJSON(http.StatusNotFound, web.Envelope{Message: fmt.Sprintf("no route %s %s", c.Request.Method, c.Request.URL.Path), Data: web.EmptyData})
	})
	return e
}

// Broker is what a supervised broker connection tells of itself (mq.Conn).
type Broker interface {
	Connected() bool
	// ConsumersReady is nil when every consumer the process started is subscribed.
	ConsumersReady() error
	// DeliveriesFlowing is nil unless a consumer has held a delivery unacked past its bound.
	DeliveriesFlowing() error
	// Collectors are its publish and consume metrics.
	Collectors() []prometheus.Collector
}

// Broker adds the readiness checks of a broker connection ("broker": connected; "consumers":
// every consumer subscribed; "deliveries", a degradation: no consumer holds a delivery unacked past
// its bound, so a consumer stuck on a batch reads as degraded although it is subscribed), the
// mq_connected gauge
// and the connection's own metrics.
func (o *Ops) Broker(b Broker) {
	o.Registry.MustRegister(b.Collectors()...)
	o.AddCheck("broker", func(context.Context) error {
		if !b.Connected() {
			return errors.New("not connected")
		}
		return nil
	})
	o.AddCheck("consumers", func(context.Context) error { return b.ConsumersReady() })
	o.AddDegradation("deliveries", func(context.Context) error { return b.DeliveriesFlowing() })
	o.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mq_connected",
		Help: "1 while the process's broker connection is up.",
	}, func() float64 {
		if b.Connected() {
			return 1
		}
		return 0
	}))
}

// ServeWhile serves Handler on addr for as long as work runs: the listener is up before work
// starts and closes only after work returned, so a worker answers /readyz ("draining") while it
// finishes its batches. A listener that cannot start or fails ends work's context. An empty addr
// runs work alone.
func (o *Ops) ServeWhile(ctx context.Context, addr string, log *zap.Logger, work func(ctx context.Context) error) error {
	if addr == "" {
		return work(ctx)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ops listener %s: %w", addr, err)
	}
	// The listener stops when work is done, not when ctx is: ctx ends first on a stop signal.
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	served := make(chan error, 1)
	go func() {
		err := httpserver.Serve(serveCtx, ln, o.Handler(), httpserver.DefaultTimeouts, log)
		stopWork()
		served <- err
	}()
	werr := work(workCtx)
	stopServing()
	if serr := <-served; werr == nil && serr != nil {
		return fmt.Errorf("ops listener: %w", serr)
	}
	return werr
}
