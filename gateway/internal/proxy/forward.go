package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
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
