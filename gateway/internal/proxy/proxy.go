// Package proxy forwards an authenticated request to its upstream service and streams the answer
// back. It is built for throughput: every route goes through one forwarding loop of its own that
// does a request's work on the request's goroutine over pooled keep-alive connections
// (forward.go; a body too large to hold, of unknown length or of an upload route streams to the
// upstream from a goroutine of its own, stream.go). It sends what httputil.ReverseProxy over
// http.Transport would send, and answers what it would answer; a fuzz test compares it with a
// direct net/http exchange.
package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/logging"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// DialTimeout bounds connecting to an upstream, so a host that does not answer is reported
// unavailable in seconds instead of after the kernel's minutes.
const DialTimeout = 2 * time.Second

// dialKeepAlive is the TCP keep-alive period of upstream connections.
const dialKeepAlive = 30 * time.Second

// Idle upstream connections of the forwarding loop: enough for the full concurrency of a loaded
// gateway, and dropped well before the services' own idle timeout (web.DefaultTimeouts, 120 s)
// would close them under a request.
const (
	maxIdlePerUpstream = 512
	idleConnTimeout    = 60 * time.Second
)

// Config is what a Proxy is built from.
type Config struct {
	// InternalToken proves to services that a request came through the gateway.
	InternalToken string
	// UpstreamTimeout bounds the wait for an upstream's status line and headers once the request
	// is sent (0: no bound); the body may take longer.
	UpstreamTimeout time.Duration
	// Metrics counts and times the forwards; nil fields count nothing.
	Metrics Metrics
}

// Metrics are the forwarding metrics (gwmetrics declares them).
type Metrics struct {
	Requests *prometheus.CounterVec   // upstream, status_class
	Duration *prometheus.HistogramVec // upstream
	Errors   *prometheus.CounterVec   // upstream, kind
}

// Proxy makes the handlers that forward routes to upstreams.
type Proxy struct {
	internalToken   string
	upstreamTimeout time.Duration
	dialer          *net.Dialer
	log             *zap.Logger
	metrics         Metrics

	copyBufs    *slicePool
	requestBufs *slicePool
	readers     sync.Pool

	mu    sync.Mutex
	pools map[string]*connPool
}

// New is a Proxy configured by cfg.
func New(cfg Config, log *zap.Logger) *Proxy {
	p := &Proxy{
		internalToken:   cfg.InternalToken,
		upstreamTimeout: cfg.UpstreamTimeout,
		dialer:          &net.Dialer{Timeout: DialTimeout, KeepAlive: dialKeepAlive},
		log:             log,
		metrics:         cfg.Metrics,
		copyBufs:        newSlicePool(32<<10, 32<<10),
		// Most requests are a few hundred bytes of headers and a small JSON body; a buffer grown
		// by a large body is not kept.
		requestBufs: newSlicePool(4<<10, 64<<10),
		pools:       make(map[string]*connPool),
	}
	p.readers.New = func() any { return bufio.NewReaderSize(nil, 4<<10) }
	return p
}

// poolFor is the connection pool of an upstream address, shared by every route to it.
func (p *Proxy) poolFor(addr string) *connPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	cp, ok := p.pools[addr]
	if !ok {
		cp = newConnPool(addr, p.dialer, maxIdlePerUpstream, idleConnTimeout)
		p.pools[addr] = cp
	}
	return cp
}

// CloseIdleConnections closes every kept-alive upstream connection, for a clean shutdown.
func (p *Proxy) CloseIdleConnections() {
	p.mu.Lock()
	pools := make([]*connPool, 0, len(p.pools))
	for _, cp := range p.pools {
		pools = append(pools, cp)
	}
	p.mu.Unlock()
	for _, cp := range pools {
		cp.closeIdle()
	}
}

// Target is where one route is forwarded.
type Target struct {
	// Service names the upstream in error messages.
	Service string
	// Base is the upstream's base URL.
	Base *url.URL
	// Path, when set, replaces the request's path (an alias of another route).
	Path string
	// Stream lifts the server's read and write deadlines for this route, whose answer is a
	// long-lived event stream.
	Stream bool
	// Upload marks a route of large bodies (an import's file): the body goes to the upstream as
	// it arrives, never held here whole, so the upstream bounds how it arrives (and this
	// process's memory is not the client's to fill by announcing a length it never sends).
	Upload bool
}

// Handler forwards every request it gets to t. The request's path must already be without its
// trailing slash.
func (p *Proxy) Handler(t Target) gin.HandlerFunc {
	h := p.handler(t)
	if p.metrics.Errors != nil {
		// Every error kind of this upstream starts at 0, so that rate() sees its first failure.
		for _, k := range ErrorKinds {
			p.metrics.Errors.WithLabelValues(t.Service, k)
		}
	}
	if p.metrics.Requests == nil || p.metrics.Duration == nil {
		return h
	}
	// The series of this target, made once: a lookup by labels on every request costs more.
	var byClass [6]prometheus.Counter
	for i := range byClass {
		byClass[i] = p.metrics.Requests.WithLabelValues(t.Service, ops.StatusClass(i*100))
	}
	duration := p.metrics.Duration.WithLabelValues(t.Service)
	return func(c *gin.Context) {
		start := time.Now()
		h(c)
		duration.Observe(time.Since(start).Seconds())
		if class := c.Writer.Status() / 100; class >= 1 && class <= 5 {
			byClass[class].Inc()
		} else {
			byClass[0].Inc()
		}
	}
}

func (p *Proxy) handler(t Target) gin.HandlerFunc {
	if !supportedBase(t.Base) {
		// route.ParseUpstreams refuses such a URL at start-up; a route built around it anyway
		// answers as an unreachable upstream rather than sending anything.
		p.log.Error("upstream URL not supported: plain http://host[:port][/path] only", zap.String("service", t.Service))
		unavailable := apperr.New(apperr.Unavailable, "%s service is unavailable", t.Service)
		return func(c *gin.Context) { web.Fail(c, unavailable) }
	}
	f := p.newForwarder(t)
	if t.Stream {
		return func(c *gin.Context) {
			rc := http.NewResponseController(c.Writer)
			// Errors mean the writer cannot change deadlines (a test recorder); nothing to lift.
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
			f.ServeHTTP(c.Writer, watchBody(c.Request))
		}
	}
	return func(c *gin.Context) { f.ServeHTTP(c.Writer, watchBody(c.Request)) }
}

// bodyWatch records whether reading the client's body ran into the server's read timeout, so a
// failed forward can tell a client too slow to send its body (408) from a failing upstream, and
// whether it was read to its end.
type bodyWatch struct {
	io.ReadCloser
	timedOut atomic.Bool
	ended    atomic.Bool
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.ended.Store(true)
	case err != nil && web.IsReadTimeout(err):
		b.timedOut.Store(true)
	}
	return n, err
}

// closesEarly closes the connection after an answer given before a streamed request body was read
// to its end (an upstream refusing an upload at once, or answering a stalled one): net/http would
// otherwise read the rest of the body before the answer goes out, as slowly as the client sends it.
type closesEarly struct {
	http.ResponseWriter
	r    *http.Request
	sent bool
}

func (w *closesEarly) WriteHeader(code int) {
	if !w.sent && code >= http.StatusOK {
		w.sent = true
		if b, ok := w.r.Body.(*bodyWatch); ok && !b.ended.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closesEarly) Write(b []byte) (int, error) {
	if !w.sent {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush and set deadlines through the wrapper.
func (w *closesEarly) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// watchBody puts a bodyWatch around r's body, if it has one.
func watchBody(r *http.Request) *http.Request {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &bodyWatch{ReadCloser: r.Body}
	}
	return r
}

func bodyTimedOut(r *http.Request) bool {
	b, ok := r.Body.(*bodyWatch)
	return ok && b.timedOut.Load()
}

// Classify maps a forwarding error to the error the caller is answered with, naming the service;
// the error's own text (addresses, Go wording) is kept as the cause, for the logs only.
//   - the upstream could not be reached (refused, no route, dial timeout): 503
//   - it was reached but sent no headers within the timeout: 504
//   - the request body went over the limit while streaming: 413
//   - anything else (connection reset, malformed answer): 502
func Classify(service string, err error) *apperr.Error {
	var tooLarge *http.MaxBytesError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		return apperr.Wrap(apperr.TooLarge, err, "body: must be at most %d bytes", tooLarge.Limit)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return apperr.Wrap(apperr.Unavailable, err, "%s service is unavailable", service)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return apperr.Wrap(apperr.GatewayTimeout, err, "%s service did not answer in time", service)
	default:
		return apperr.Wrap(apperr.BadGateway, err, "%s service gave no valid answer", service)
	}
}

// ErrorKinds are the values ErrorKind returns (the kind label of gateway_upstream_errors_total).
var ErrorKinds = []string{"timeout", "refused", "reset", "canceled", "other"}

// ErrorKind names a forwarding error for the metrics: timeout, refused, reset, canceled or other.
func ErrorKind(err error) string {
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "other"
}

func (p *Proxy) errorHandler(service string) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		log := logging.From(r.Context(), p.log)
		if bodyTimedOut(r) {
			// The connection cannot be read any further: answer and close it.
			log.Info("client did not send its body in time", zap.String("service", service), zap.Error(err))
			w.Header().Set("Connection", "close")
			web.WriteError(w, web.ErrBodyTimeout)
			return
		}
		if errors.Is(r.Context().Err(), context.Canceled) {
			// Nobody is left to answer: drop the connection rather than send a made-up status.
			log.Debug("client went away before the upstream answered", zap.String("service", service), zap.Error(err))
			panic(http.ErrAbortHandler)
		}
		if p.metrics.Errors != nil {
			p.metrics.Errors.WithLabelValues(service, ErrorKind(err)).Inc()
		}
		answer := Classify(service, err)
		if status := answer.Kind.Status(); status >= 500 {
			log.Error("upstream failed", zap.String("service", service), zap.Int("status", status), zap.Error(err))
		}
		web.WriteError(w, answer)
	}
}

// slicePool recycles byte slices of at least size bytes; one grown beyond maxKeep is left to the
// garbage collector rather than kept.
type slicePool struct {
	maxKeep int
	pool    sync.Pool
}

func newSlicePool(size, maxKeep int) *slicePool {
	sp := &slicePool{maxKeep: maxKeep}
	sp.pool.New = func() any {
		b := make([]byte, 0, size)
		return &b
	}
	return sp
}

// get is an empty slice; its capacity is the room to use.
func (sp *slicePool) get() *[]byte { return sp.pool.Get().(*[]byte) }

// put gives back bp, now holding b (the same slice, perhaps grown).
func (sp *slicePool) put(bp *[]byte, b []byte) {
	if cap(b) > sp.maxKeep {
		return
	}
	*bp = b[:0]
	sp.pool.Put(bp)
}
