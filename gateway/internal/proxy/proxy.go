// Package proxy forwards an authenticated request to its upstream service and streams the answer
// back. It is built for throughput: one shared transport that keeps hundreds of idle connections
// per upstream, pooled copy buffers, and every reverse proxy built once at start.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"time"

	"ccplatform/gateway/internal/auth"

	"ccplatform/pkg/logging"
	"ccplatform/pkg/requestid"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
)

// DialTimeout bounds connecting to an upstream, so a host that does not answer is reported
// unavailable in seconds instead of after the kernel's minutes.
const DialTimeout = 2 * time.Second

// NewTransport is the upstream transport. responseHeaderTimeout bounds the wait for an upstream's
// status line and headers only, so streamed bodies (server-sent events) can last.
func NewTransport(responseHeaderTimeout time.Duration) *http.Transport {
	return &http.Transport{
		// Upstreams are addressed directly; an environment proxy would only add a hop.
		Proxy:       nil,
		DialContext: (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		// Go's default of 2 idle connections per host makes a busy gateway reopen connections
		// all the time; keep enough for the full concurrency of a loaded gateway.
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		// Pass compressed bodies through untouched rather than inflating them here.
		DisableCompression: true,
	}
}

// Proxy makes the handlers that forward routes to upstreams.
type Proxy struct {
	transport     http.RoundTripper
	internalToken string
	buffers       *bufferPool
	log           *zap.Logger
}

// New is a Proxy sending through transport and proving itself to services with internalToken.
func New(transport http.RoundTripper, internalToken string, log *zap.Logger) *Proxy {
	return &Proxy{transport: transport, internalToken: internalToken, buffers: newBufferPool(32 << 10), log: log}
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
}

// Handler forwards every request it gets to t. The request's path must already be without its
// trailing slash.
func (p *Proxy) Handler(t Target) gin.HandlerFunc {
	rp := &httputil.ReverseProxy{
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
	return func(c *gin.Context) {
		if t.Stream {
			rc := http.NewResponseController(c.Writer)
			// Errors mean the writer cannot change deadlines (a test recorder); nothing to lift.
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
		}
		rp.ServeHTTP(c.Writer, c.Request)
	}
}

func flushInterval(stream bool) time.Duration {
	if stream {
		return -1
	}
	return 0
}

// forwardHeaders makes the upstream request's identity headers the gateway's own: whatever the
// client sent under these names is dropped, and the raw API key does not travel further.
func forwardHeaders(h http.Header, id auth.Identity, reqID, internalToken string) {
	h.Del(auth.HeaderAPIKey)
	h.Del(web.HeaderUserID)
	h.Del(web.HeaderAccessGroup)
	h.Del(web.HeaderInternalToken)
	if id.UserID != 0 {
		h.Set(web.HeaderUserID, strconv.FormatInt(id.UserID, 10))
		h.Set(web.HeaderAccessGroup, id.AccessGroup)
	}
	h.Set(web.HeaderInternalToken, internalToken)
	if reqID != "" {
		h.Set(requestid.Header, reqID)
	}
}

// Failure is how a failed forward is answered.
type Failure struct {
	Status  int
	Message string
}

// Classify maps a forwarding error to a status and a message naming the service; the error's
// own text (addresses, Go wording) stays in the logs.
//   - the upstream could not be reached (refused, no route, dial timeout): 503
//   - it was reached but sent no headers within the timeout: 504
//   - the request body went over the limit while streaming: 413
//   - anything else (connection reset, malformed answer): 502
func Classify(service string, err error) Failure {
	var tooLarge *http.MaxBytesError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		return Failure{http.StatusRequestEntityTooLarge, "body: must be at most " + strconv.FormatInt(tooLarge.Limit, 10) + " bytes"}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return Failure{http.StatusServiceUnavailable, service + " service is unavailable"}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return Failure{http.StatusGatewayTimeout, service + " service did not answer in time"}
	default:
		return Failure{http.StatusBadGateway, service + " service gave no valid answer"}
	}
}

// statusClientClosed records, in the access log only, that the client hung up before the answer.
const statusClientClosed = 499

func (p *Proxy) errorHandler(service string) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		log := logging.From(r.Context(), p.log)
		if errors.Is(r.Context().Err(), context.Canceled) {
			log.Debug("client went away before the upstream answered", zap.String("service", service), zap.Error(err))
			w.WriteHeader(statusClientClosed)
			return
		}
		f := Classify(service, err)
		if f.Status >= 500 {
			log.Error("upstream failed", zap.String("service", service), zap.Int("status", f.Status), zap.Error(err))
		}
		writeEnvelope(w, f.Status, f.Message)
	}
}

// writeEnvelope answers outside gin (the reverse proxy only has the ResponseWriter).
func writeEnvelope(w http.ResponseWriter, status int, message string) {
	body, _ := json.Marshal(web.Envelope{Message: message, Data: web.EmptyData})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
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
