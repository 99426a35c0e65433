package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"ccplatform/gateway/internal/auth"

	"ccplatform/pkg/logging"
	"ccplatform/pkg/requestid"
	"ccplatform/pkg/tracing"

	"go.uber.org/zap"
)

// maxBufferedBody is the largest request body the forwarder holds in memory, to write the request
// at once and to be able to send it again; a larger one, one of unknown length, one with trailers
// and every upload route's stream to the upstream as they arrive.
const maxBufferedBody = 8 << 20

// max1xxResponses is how many informational answers may precede the final one, as in
// http.Transport.
const max1xxResponses = 5

// forwarder carries the requests of one route to its upstream. Everything happens on the
// request's own goroutine over pooled keep-alive connections: a request whose body is held in
// memory (line, headers, body) leaves in one write and the answer is read and copied back
// directly. http.Transport instead runs a reader and a writer goroutine per connection, hands every
// request and answer between them, writes headers and body apart and clones the header map; on a
// loaded two-core machine that cost as much CPU as the upstream's own handling of a request.
// A streamed body (see maxBufferedBody) is written by a goroutine of its own while the request's
// goroutine waits for the answer, which may come before the body's end.
type forwarder struct {
	p       *Proxy
	service string
	pool    *connPool
	// timeout bounds the wait for the status line and headers once the request is written.
	timeout time.Duration
	// host is the Host header of every request: the upstream's address as configured.
	host string
	// basePath is the upstream URL's own path, joined in front of every forwarded path.
	basePath string
	// path, when set, replaces the request's path (Target.Path).
	path string
	// flushAll flushes every write of an answer at once (the event-stream route).
	flushAll bool
	// upload streams every body, whatever its length (Target.Upload).
	upload bool
	fail   func(http.ResponseWriter, *http.Request, error)
}

// supportedBase reports whether the forwarder can speak to an upstream at b: plain HTTP to a
// host that needs no rewriting, no credentials or query in the URL (route.ParseUpstreams refuses
// the others at start-up).
func supportedBase(b *url.URL) bool {
	return b.Scheme == "http" && b.User == nil && b.RawQuery == "" && b.Opaque == "" && b.RawPath == "" && !b.ForceQuery && plainHost(b.Host)
}

func (p *Proxy) newForwarder(t Target) *forwarder {
	b := t.Base
	addr := b.Host
	if b.Port() == "" {
		addr = net.JoinHostPort(b.Hostname(), "80")
	}
	return &forwarder{
		p:        p,
		service:  t.Service,
		pool:     p.poolFor(addr),
		timeout:  p.upstreamTimeout,
		host:     b.Host,
		basePath: b.Path,
		path:     t.Path,
		flushAll: t.Stream,
		upload:   t.Upload,
		fail:     p.errorHandler(t.Service),
	}
}

// plainHost reports whether host can be sent as it is: printable ASCII, no IPv6 zone (which
// http.Transport would strip) and no punycode conversion to make.
func plainHost(host string) bool {
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; c <= ' ' || c >= 0x7f || c == '%' || c == '/' {
			return false
		}
	}
	return true
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.streams(r) {
		f.serveStreamed(w, r)
		return
	}
	bp := f.p.requestBufs.get()
	req, err := f.appendHead(*bp, r)
	if err == nil {
		req, err = appendBody(req, r)
	}
	var res *http.Response
	var uc *upstreamConn
	if err == nil {
		res, uc, err = f.roundTrip(r, req)
	}
	f.p.requestBufs.put(bp, req)
	if err != nil {
		f.fail(w, r, err)
		return
	}
	f.respond(w, r, res, uc, nil)
}

// streams reports whether r's body goes to the upstream as it arrives instead of being held here.
func (f *forwarder) streams(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	return f.upload || r.ContentLength < 0 || r.ContentLength > maxBufferedBody || len(r.Trailer) > 0
}

// appendHead writes the upstream request's line and headers into b, as httputil.ReverseProxy
// over http.Transport would send them: the hop-by-hop headers (and any the client names in
// Connection) dropped, X-Forwarded-* and the identity headers the gateway's own, the trace the
// gateway's span. A streamed body of unknown length, or one with trailers, goes chunked.
func (f *forwarder) appendHead(b []byte, r *http.Request) ([]byte, error) {
	ctx := r.Context()
	id, _ := auth.FromContext(ctx)
	reqID := requestid.From(ctx)
	h := r.Header

	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	b = append(b, method...)
	b = append(b, ' ')
	b = f.appendRequestURI(b, r.URL)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, f.host...)
	b = append(b, "\r\n"...)

	named := connectionNamed(h["Connection"])
	if ua, ok := h["User-Agent"]; ok && len(ua) > 0 && !slices.Contains(named, "User-Agent") {
		// Only the first value travels, as http.Transport writes it; no User-Agent of the
		// client's means none upstream, not Go's default.
		if v := textproto.TrimString(ua[0]); v != "" {
			b = appendHeader(b, "User-Agent", v)
		}
	}
	if chunkedBody(r) {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		if len(r.Trailer) > 0 {
			keys := make([]string, 0, len(r.Trailer))
			for k := range r.Trailer {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = appendHeader(b, "Trailer", strings.Join(keys, ","))
		}
	} else if cl := r.ContentLength; cl > 0 || sendsZeroLength(method) {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, max(cl, 0), 10)
		b = append(b, "\r\n"...)
	}
	for k, vv := range h {
		if dropRequestHeader(k) || (reqID != "" && k == requestid.Header) || slices.Contains(named, k) {
			continue
		}
		for _, v := range vv {
			b = appendHeader(b, k, v)
		}
	}
	if containsToken(h["Te"], "trailers") {
		b = appendHeader(b, "Te", "trailers")
	}
	// X-Forwarded-* as httputil.ProxyRequest.SetXForwarded sets them, the client's own dropped.
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		b = appendHeader(b, "X-Forwarded-For", ip)
	}
	b = appendHeader(b, "X-Forwarded-Host", r.Host)
	if r.TLS == nil {
		b = appendHeader(b, "X-Forwarded-Proto", "http")
	} else {
		b = appendHeader(b, "X-Forwarded-Proto", "https")
	}
	// The identity headers (identity.go). These values do not come from the request parser, so
	// they are checked as http.Transport checks every header.
	hs, n := identityHeaders(id, f.p.internalToken)
	for _, hd := range hs[:n] {
		if !validHeaderValue(hd.value) {
			return b, fmt.Errorf("invalid header field value for %q", hd.key)
		}
		b = appendHeader(b, hd.key, hd.value)
	}
	// The gateway's own span is the parent upstream, not the client's.
	tc := traceCarrier{b: b}
	tracing.Inject(ctx, &tc)
	b = tc.b
	if reqID != "" {
		if !validHeaderValue(reqID) {
			return b, fmt.Errorf("invalid header field value for %q", requestid.Header)
		}
		b = appendHeader(b, requestid.Header, reqID)
	}
	return append(b, "\r\n"...), nil
}

// chunkedBody reports whether r's body goes chunked: its length is unknown, or trailers follow it.
func chunkedBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	return r.ContentLength < 0 || len(r.Trailer) > 0
}

// appendBody reads r's body, of known length, in full onto b.
func appendBody(b []byte, r *http.Request) ([]byte, error) {
	if cl := int(r.ContentLength); cl > 0 {
		if r.Body == nil {
			return b, errors.New("request announces a body but has none")
		}
		n := len(b)
		b = slices.Grow(b, cl)[:n+cl]
		if _, err := io.ReadFull(r.Body, b[n:]); err != nil {
			return b[:n], fmt.Errorf("read request body: %w", err)
		}
	}
	return b, nil
}

// appendRequestURI writes the path (Target.Path or the request's, behind the upstream's base path,
// re-escaped from its decoded form as httputil.ReverseProxy does) and the query.
func (f *forwarder) appendRequestURI(b []byte, u *url.URL) []byte {
	p := u.Path
	if f.path != "" {
		p = f.path
	}
	out := url.URL{Path: singleJoiningSlash(f.basePath, p)}
	ep := out.EscapedPath()
	if ep == "" {
		ep = "/"
	}
	b = append(b, ep...)
	if u.ForceQuery || u.RawQuery != "" {
		b = append(b, '?')
		b = append(b, u.RawQuery...)
	}
	return b
}

// singleJoiningSlash joins two paths with exactly one slash between them, as httputil's URL
// rewriting does.
func singleJoiningSlash(a, b string) string {
	aslash := strings.HasSuffix(a, "/")
	bslash := strings.HasPrefix(b, "/")
	switch {
	case aslash && bslash:
		return a + b[1:]
	case !aslash && !bslash:
		return a + "/" + b
	}
	return a + b
}

// sendsZeroLength reports whether a bodiless request of method carries "Content-Length: 0", as
// http.Transport decides it: many servers expect a length with these methods.
func sendsZeroLength(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

func appendHeader(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, v...)
	return append(b, "\r\n"...)
}

// dropRequestHeader reports the request headers never copied as they are: those written from
// other fields (Host, User-Agent, Content-Length), the hop-by-hop ones, the client's forwarding
// headers, and the identity and trace headers the gateway replaces.
func dropRequestHeader(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length",
		"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
		"Traceparent", "Tracestate":
		return true
	}
	return isIdentityHeader(k)
}

// dropResponseHeader reports the upstream answer's headers never passed on: the hop-by-hop ones,
// and X-Request-Id, which the gateway has already set on its answer.
func dropResponseHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", requestid.Header:
		return true
	}
	return false
}

// connectionNamed is the canonical names of the headers a Connection header lists as hop-by-hop.
func connectionNamed(values []string) []string {
	var named []string
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				named = append(named, http.CanonicalHeaderKey(f))
			}
		}
	}
	return named
}

// containsToken reports whether a comma-separated header lists token, in any case.
func containsToken(values []string, token string) bool {
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(textproto.TrimString(f), token) {
				return true
			}
		}
	}
	return false
}

// validHeaderValue is httpguts.ValidHeaderFieldValue: no control bytes but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// roundTrip sends req over a pooled connection and reads the answer's headers. A reused
// connection can turn out closed by the upstream only once the request is on it; the request is
// then sent once more on a new connection, provided the upstream cannot have acted on it: nothing
// of an answer arrived, and either the request did not fully leave or it may be repeated
// (http.Transport's rule for retrying a request).
func (f *forwarder) roundTrip(r *http.Request, req []byte) (*http.Response, *upstreamConn, error) {
	ctx := r.Context()
	uc, err := f.pool.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	res, err := f.exchange(ctx, r, uc, req)
	if err == nil {
		return res, uc, nil
	}
	if !uc.reused || uc.in.n > 0 || ctx.Err() != nil || isTimeout(err) || !(uc.writeFailed || replayable(r)) {
		return nil, nil, err
	}
	if uc, err = f.pool.dial(ctx); err != nil {
		return nil, nil, err
	}
	if res, err = f.exchange(ctx, r, uc, req); err != nil {
		return nil, nil, err
	}
	return res, uc, nil
}

// replayable is http.Request.isReplayable for a body held in memory: a method that may be
// repeated, or a request that says it is idempotent.
func replayable(r *http.Request) bool {
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, ok := r.Header["Idempotency-Key"]
	if !ok {
		_, ok = r.Header["X-Idempotency-Key"]
	}
	return ok
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// exchange writes req on uc and reads the final answer's headers. The client going away closes
// the connection, which ends any write or read in progress. On failure uc is closed.
func (f *forwarder) exchange(ctx context.Context, r *http.Request, uc *upstreamConn, req []byte) (*http.Response, error) {
	uc.stopWatch = context.AfterFunc(ctx, uc.abort)
	werr, err := uc.send(req, f.timeout)
	uc.writeFailed = werr != nil
	// Even when the write failed, the upstream may have answered already (it refused the request
	// before reading all of it), so the answer is read in every case.
	if werr != nil && err == nil && f.timeout > 0 {
		err = uc.conn.SetReadDeadline(time.Now().Add(f.timeout))
	}
	uc.in.n, uc.in.limit = 0, maxHeaderBytes
	uc.br = f.p.readers.Get().(*bufio.Reader)
	uc.br.Reset(&uc.in)
	var res *http.Response
	if err == nil {
		res, err = readFinalResponse(uc.br, r)
	}
	if err == nil && f.timeout > 0 {
		// Only the headers are bounded: a body may take as long as the upstream needs.
		err = uc.conn.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.release(uc, false)
		if werr != nil && uc.in.n == 0 && !isTimeout(err) {
			return nil, fmt.Errorf("write request: %w", werr)
		}
		return nil, fmt.Errorf("read response: %w", err)
	}
	uc.in.limit = noReadLimit
	return res, nil
}

// readFinalResponse reads past informational answers to the final one. A 101 is refused: the
// forwarder never asks for a protocol switch.
func readFinalResponse(br *bufio.Reader, r *http.Request) (*http.Response, error) {
	for n := 0; ; n++ {
		res, err := http.ReadResponse(br, r)
		if err != nil {
			return nil, err
		}
		switch {
		case res.StatusCode == http.StatusSwitchingProtocols:
			return nil, errors.New("upstream switched protocols though no upgrade was requested")
		case res.StatusCode < 100 || res.StatusCode > 199:
			return res, nil
		case n >= max1xxResponses:
			return nil, errors.New("too many 1xx informational responses")
		}
	}
}

// release ends uc's exchange: back to the pool when keep holds and nothing can be left on it (the
// client did not go away meanwhile, the whole request left, no byte beyond the answer was read),
// closed otherwise.
func (f *forwarder) release(uc *upstreamConn, keep bool) {
	stopped := uc.stopWatch()
	keep = keep && stopped && !uc.writeFailed && uc.br.Buffered() == 0
	uc.br.Reset(nil)
	f.p.readers.Put(uc.br)
	uc.br, uc.stopWatch = nil, nil
	if keep {
		f.pool.put(uc)
		return
	}
	uc.close()
}

// respond copies the answer to the client, as httputil.ReverseProxy does: headers without the
// hop-by-hop ones, the status, the body (flushed write by write when its length is unknown, it
// is an event stream or the route streams), then any trailers. A body cut short can only abort the
// client connection. s is the sender of a streamed request body (nil when the body was sent with
// the head): an answer that came before the body's end ends the sending and the connection.
func (f *forwarder) respond(w http.ResponseWriter, r *http.Request, res *http.Response, uc *upstreamConn, s *bodySender) {
	named := connectionNamed(res.Header["Connection"])
	stream := f.flushAll || res.ContentLength == -1 || (!slices.Contains(named, "Content-Type") && isEventStream(res.Header["Content-Type"]))
	dst := w.Header()
	for k, vv := range res.Header {
		if dropResponseHeader(k) || slices.Contains(named, k) {
			continue
		}
		if prior, ok := dst[k]; ok {
			dst[k] = append(prior, vv...)
		} else {
			// res is dropped after this answer, so its slices can be handed over.
			dst[k] = vv
		}
	}
	announced := len(res.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		dst.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)

	var rc *http.ResponseController
	if stream {
		rc = http.NewResponseController(w)
		// The headers go at once, even if the first part of the body is slow to come.
		_ = rc.Flush()
	}
	if err := f.copyBody(w, res.Body, rc); err != nil {
		f.release(uc, false)
		if s != nil {
			s.stop()
		}
		// A read cut by the client going away (its connection closed the upstream one) is no
		// upstream failure.
		var rerr *bodyReadError
		if errors.As(err, &rerr) && r.Context().Err() == nil {
			logging.From(r.Context(), f.p.log).Error("upstream answer cut short", zap.String("service", f.service), zap.Error(err))
		}
		// The status is sent: aborting the client connection is the only way left to say the
		// answer is incomplete. Only an http.Server recovers that panic (a test may call the
		// handler without one), as httputil.ReverseProxy also decides.
		if r.Context().Value(http.ServerContextKey) != nil {
			panic(http.ErrAbortHandler)
		}
		return
	}
	// The body is at its end: closing reads nothing more and has filled res.Trailer.
	_ = res.Body.Close()
	if s != nil && s.early() {
		f.release(uc, false)
		// The answer goes out now, not once the sender has given up on the client's body.
		_ = http.NewResponseController(w).Flush()
		s.stop()
	} else {
		keep := !res.Close
		if s != nil {
			keep = keep && s.ok()
		}
		f.release(uc, keep)
	}

	if len(res.Trailer) > 0 {
		// Force chunking: the trailers can only follow a chunked body.
		_ = http.NewResponseController(w).Flush()
	}
	if len(res.Trailer) == announced {
		addHeader(dst, res.Trailer)
		return
	}
	for k, vv := range res.Trailer {
		for _, v := range vv {
			dst.Add(http.TrailerPrefix+k, v)
		}
	}
}

// bodyReadError is a failure to read the upstream's body, as opposed to writing it to the client.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "read upstream body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// copyBody copies body to w through a pooled buffer, flushing after every write when rc is set.
func (f *forwarder) copyBody(w io.Writer, body io.Reader, rc *http.ResponseController) error {
	bp := f.p.copyBufs.get()
	defer f.p.copyBufs.put(bp, *bp)
	buf := (*bp)[:cap(*bp)]
	for {
		n, err := body.Read(buf)
		if n > 0 {
			nw, werr := w.Write(buf[:n])
			if werr != nil {
				return fmt.Errorf("write answer: %w", werr)
			}
			if nw != n {
				return fmt.Errorf("write answer: %w", io.ErrShortWrite)
			}
			if rc != nil {
				_ = rc.Flush()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &bodyReadError{err: err}
		}
	}
}

// isEventStream reports whether a Content-Type is text/event-stream, whose events must reach the
// client as they come.
func isEventStream(values []string) bool {
	if len(values) == 0 {
		return false
	}
	base, _, _ := strings.Cut(values[0], ";")
	return strings.EqualFold(strings.TrimSpace(base), "text/event-stream")
}

func addHeader(dst, src http.Header) {
	for k, vv := range src {
		for _, v := range vv {
			dst.Add(k, v)
		}
	}
}

// traceCarrier lets the trace propagator append its headers to a request being written.
type traceCarrier struct{ b []byte }

func (c *traceCarrier) Get(string) string { return "" }

func (c *traceCarrier) Set(k, v string) {
	if validHeaderValue(v) {
		c.b = appendHeader(c.b, http.CanonicalHeaderKey(k), v)
	}
}

func (c *traceCarrier) Keys() []string { return nil }
