// Package proxy forwards an authenticated request to its upstream service and streams the answer
// back. It is built for throughput: ordinary routes go through a forwarding loop of its own that
// does all of a request's work on the request's goroutine over pooled keep-alive connections
// (forward.go); the event stream and the rare requests that loop does not carry go through
// httputil.ReverseProxy over one shared transport. Both behave alike: same headers, same errors.
package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"ccplatform/gateway/internal/auth"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/logging"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/requestid"
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

// NewTransport is the upstream transport of the reverse proxy. responseHeaderTimeout bounds the
// wait for an upstream's status line and headers only, so streamed bodies (server-sent events)
// can last.
func NewTransport(responseHeaderTimeout time.Duration) *http.Transport {
	return &http.Transport{
		// Upstreams are addressed directly; an environment proxy would only add a hop.
		Proxy:       nil,
		DialContext: (&net.Dialer{Timeout: DialTimeout, KeepAlive: dialKeepAlive}).DialContext,
		// Go's default of 2 idle connections per host makes a busy gateway reopen connections
		// all the time; keep enough for the full concurrency of a loaded gateway.
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   maxIdlePerUpstream,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		// Pass compressed bodies through untouched rather than inflating them here.
		DisableCompression: true,
	}
}

// Config is what a Proxy is built from.
type Config struct {
	// InternalToken proves to services that a request came through the gateway.
	InternalToken string
	// UpstreamTimeout bounds the wait for an upstream's status line and headers once the request
	// is sent (0: no bound); the body may take longer.
	UpstreamTimeout time.Duration
	// Transport carries the reverse proxy's requests; nil means NewTransport(UpstreamTimeout).
	Transport http.RoundTripper
	// Metrics counts and times the forwards; nil fields count nothing.
	Metrics Metrics
	// ReverseProxyOnly sends every route through the reverse proxy (to measure the two engines
	// side by side).
	ReverseProxyOnly bool
}

// Metrics are the forwarding metrics (gwmetrics declares them).
type Metrics struct {
	Requests *prometheus.CounterVec   // upstream, status_class
	Duration *prometheus.HistogramVec // upstream
	Errors   *prometheus.CounterVec   // upstream, kind
}

// Proxy makes the handlers that forward routes to upstreams.
type Proxy struct {
	transport       http.RoundTripper
	internalToken   string
	upstreamTimeout time.Duration
	dialer          *net.Dialer
	log             *zap.Logger
	metrics         Metrics
	rpOnly          bool

	// buffers serve the reverse proxy; the others the forwarding loop.
	buffers     *bufferPool
	copyBufs    *slicePool
	requestBufs *slicePool
	readers     sync.Pool

	mu    sync.Mutex
	pools map[string]*connPool
}

// New is a Proxy configured by cfg.
func New(cfg Config, log *zap.Logger) *Proxy {
	tr := cfg.Transport
	if tr == nil {
		tr = NewTransport(cfg.UpstreamTimeout)
	}
	p := &Proxy{
		transport:       tr,
		internalToken:   cfg.InternalToken,
		upstreamTimeout: cfg.UpstreamTimeout,
		dialer:          &net.Dialer{Timeout: DialTimeout, KeepAlive: dialKeepAlive},
		log:             log,
		metrics:         cfg.Metrics,
		rpOnly:          cfg.ReverseProxyOnly,
		buffers:         newBufferPool(32 << 10),
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
	if c, ok := p.transport.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
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
	rp := keepsRequestID{p.reverseProxy(t)}
	if t.Stream {
		return func(c *gin.Context) {
			rc := http.NewResponseController(c.Writer)
			// Errors mean the writer cannot change deadlines (a test recorder); nothing to lift.
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
			rp.ServeHTTP(c.Writer, c.Request)
		}
	}
	if t.Upload {
		return func(c *gin.Context) {
			r := watchBody(c.Request)
			if bw, ok := r.Body.(*bodyWatch); ok {
				// The reverse proxy reports a failure with its own request, whose body wraps
				// this one: the watch travels in the context too.
				r = r.WithContext(context.WithValue(r.Context(), watchKey{}, bw))
			}
			rp.ServeHTTP(&closesEarly{ResponseWriter: c.Writer, r: r}, r)
		}
	}
	if f := p.newForwarder(t, rp); f != nil && !p.rpOnly {
		return func(c *gin.Context) { f.ServeHTTP(c.Writer, watchBody(c.Request)) }
	}
	return func(c *gin.Context) { rp.ServeHTTP(c.Writer, watchBody(c.Request)) }
}

// keepsRequestID wraps the reverse proxy, which answers an upstream's interim response (100
// Continue to a client's Expect) by writing it and then clearing the whole header map: the
// X-Request-Id the gateway set for the final answer went with it. This puts it back before the
// final status goes out. (The forwarding loop keeps it by itself; a fuzz test compares the two.)
type keepsRequestID struct{ next http.Handler }

func (k keepsRequestID) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := w.Header().Get(requestid.Header)
	if id == "" {
		k.next.ServeHTTP(w, r)
		return
	}
	k.next.ServeHTTP(&idWriter{ResponseWriter: w, id: id}, r)
}

// idWriter restores the request id on the final answer's header.
type idWriter struct {
	http.ResponseWriter
	id    string
	final bool
}

func (w *idWriter) WriteHeader(code int) {
	if code >= http.StatusOK && !w.final {
		w.final = true
		if w.Header().Get(requestid.Header) == "" {
			w.Header().Set(requestid.Header, w.id)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *idWriter) Write(b []byte) (int, error) {
	if !w.final {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush, hijack and lift deadlines through the wrapper.
func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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

// closesEarly closes the connection after an answer given before the request's body was read to
// its end (an upstream refusing an upload at once, or answering a stalled one): net/http would
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

// Unwrap lets http.ResponseController flush through the wrapper.
func (w *closesEarly) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// watchBody puts a bodyWatch around r's body, if it has one.
func watchBody(r *http.Request) *http.Request {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &bodyWatch{ReadCloser: r.Body}
	}
	return r
}

// watchKey keys an upload's bodyWatch in its request's context.
type watchKey struct{}

func bodyTimedOut(r *http.Request) bool {
	b, ok := r.Body.(*bodyWatch)
	if !ok {
		b, ok = r.Context().Value(watchKey{}).(*bodyWatch)
	}
	return ok && b.timedOut.Load()
}

// reverseProxy is the httputil.ReverseProxy of t: the stream route's way, and the fallback of the
// forwarding loop.
func (p *Proxy) reverseProxy(t Target) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// Forward exactly the decoded path that was routed on, never a differently encoded one.
			pr.Out.URL.RawPath = ""
			if t.Path != "" {
				pr.Out.URL.Path = t.Path
			}
			pr.SetURL(t.Base)
			pr.SetXForwarded()
			identity, _ := auth.FromContext(pr.In.Context())
			forwardHeaders(pr.Out.Header, identity, requestid.From(pr.In.Context()), p.internalToken)
		},
		Transport: p.transport,
		// A stream route flushes every write at once. Other routes keep 0 (one write per answer,
		// measured cheaper); ReverseProxy still flushes at once any text/event-stream answer or
		// one of unknown length, so nothing that streams is held back.
		FlushInterval: flushInterval(t.Stream),
		BufferPool:    p.buffers,
		ErrorLog:      zap.NewStdLog(p.log),
		ModifyResponse: func(r *http.Response) error {
			// The gateway already set X-Request-Id on the response; copying the upstream's
			// would send the header twice.
			r.Header.Del(requestid.Header)
			return nil
		},
		ErrorHandler: p.errorHandler(t.Service),
	}
}

func flushInterval(stream bool) time.Duration {
	if stream {
		return -1
	}
	return 0
}

// forwardHeaders makes the upstream request's identity headers the gateway's own (identity.go)
// on the reverse-proxy path.
func forwardHeaders(h http.Header, id auth.Identity, reqID, internalToken string) {
	for _, k := range identityHeaderNames {
		h.Del(k)
	}
	hs, n := identityHeaders(id, internalToken)
	for _, hd := range hs[:n] {
		h.Set(hd.key, hd.value)
	}
	if reqID != "" {
		h.Set(requestid.Header, reqID)
	}
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

// bufferPool recycles the buffers the reverse proxy copies bodies through.
type bufferPool struct {
	size int
	pool sync.Pool
}

func newBufferPool(size int) *bufferPool {
	bp := &bufferPool{size: size}
	bp.pool.New = func() any {
		b := make([]byte, size)
		return &b
	}
	return bp
}

func (bp *bufferPool) Get() []byte { return *(bp.pool.Get().(*[]byte)) }

func (bp *bufferPool) Put(b []byte) {
	if cap(b) < bp.size {
		return
	}
	b = b[:bp.size]
	bp.pool.Put(&b)
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
