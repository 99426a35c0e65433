package proxy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// connPool keeps the idle keep-alive connections to one upstream address. The most recently used
// connection is handed out first, so a quiet spell lets the others age out instead of keeping
// every connection barely alive.
type connPool struct {
	addr        string
	dialer      *net.Dialer
	maxIdle     int
	idleTimeout time.Duration

	mu   sync.Mutex
	idle []*upstreamConn
}

func newConnPool(addr string, dialer *net.Dialer, maxIdle int, idleTimeout time.Duration) *connPool {
	return &connPool{addr: addr, dialer: dialer, maxIdle: maxIdle, idleTimeout: idleTimeout}
}

// get is an idle connection that still looks open, or a new one.
func (p *connPool) get(ctx context.Context) (*upstreamConn, error) {
	now := time.Now()
	for {
		c := p.takeIdle()
		if c == nil {
			return p.dial(ctx)
		}
		// The upstream may have closed it while it sat idle (a restart, its own idle timeout, a
		// graceful shutdown); finding that out before the request is written avoids sending a
		// request that cannot be safely repeated into a dead connection.
		if now.Sub(c.idleSince) < p.idleTimeout && c.open() {
			c.reused = true
			return c, nil
		}
		c.close()
	}
}

func (p *connPool) takeIdle() *upstreamConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	c := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return c
}

// dial opens a new connection; its errors are *net.OpError with Op "dial", which Classify reports
// as the upstream being unavailable.
func (p *connPool) dial(ctx context.Context) (*upstreamConn, error) {
	nc, err := p.dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	return newUpstreamConn(nc), nil
}

// put keeps c for the next request, or closes it when enough are kept already. Connections idle
// for longer than idleTimeout are closed on the way, so that the pool never hands out one the
// upstream is about to close on its own idle timeout.
func (p *connPool) put(c *upstreamConn) {
	now := time.Now()
	c.idleSince = now
	var expired [8]*upstreamConn
	n := 0
	p.mu.Lock()
	for n < len(expired) && len(p.idle) > n && now.Sub(p.idle[n].idleSince) >= p.idleTimeout {
		expired[n] = p.idle[n]
		n++
	}
	if n > 0 {
		rest := copy(p.idle, p.idle[n:])
		clear(p.idle[rest:])
		p.idle = p.idle[:rest]
	}
	keep := len(p.idle) < p.maxIdle
	if keep {
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	if !keep {
		c.close()
	}
	for _, e := range expired[:n] {
		e.close()
	}
}

// closeIdle closes every idle connection.
func (p *connPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// idleCount is the number of idle connections kept.
func (p *connPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// upstreamConn is one connection to an upstream. Only the request that took it from the pool
// touches it, so its fields need no lock.
type upstreamConn struct {
	conn net.Conn
	// in is what the response reader pulls from: it counts bytes and bounds the header size.
	in connReader
	// br reads the current answer; borrowed from the Proxy's pool for one exchange.
	br *bufio.Reader
	// raw, when the platform offers it, lets open look at the socket without reading from it,
	// and send wait for the answer without a read that is bound to find nothing yet.
	raw      syscall.RawConn
	peekFunc func(fd uintptr) bool
	peekBuf  [1]byte
	peekOpen bool
	// The exchange send runs inside raw.Read.
	sendFunc    func(fd uintptr) bool
	out         []byte
	timeout     time.Duration
	sent        bool
	writeErr    error
	deadlineErr error
	// abort closes the connection from the goroutine context.AfterFunc starts when the client
	// goes away; stopWatch undoes the registration once the exchange is over.
	abort     func()
	stopWatch func() bool
	// reused marks a connection that served a request before: only such a connection may have
	// been closed under the request by the upstream, which is what a retry is for.
	reused bool
	// writeFailed marks an exchange whose request did not fully leave: the upstream cannot have
	// acted on it.
	writeFailed bool
	idleSince   time.Time
}

func newUpstreamConn(nc net.Conn) *upstreamConn {
	c := &upstreamConn{conn: nc, in: connReader{c: nc, limit: noReadLimit}}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
		}
	}
	c.peekFunc = c.peek
	c.sendFunc = c.writeOut
	c.abort = c.close
	return c
}

func (c *upstreamConn) close() {
	_ = c.conn.Close()
}

// open reports whether the idle connection is still usable: not closed or reset by the upstream,
// and holding no stray bytes.
func (c *upstreamConn) open() bool {
	if c.raw == nil {
		return true
	}
	c.peekOpen = false
	if err := c.raw.Read(c.peekFunc); err != nil {
		return false
	}
	return c.peekOpen
}

// send writes req, bounds the wait for the answer's first bytes by timeout (0: no bound) and
// waits until they can be read. writeErr is the write's failure; err the wait's (a passed deadline,
// a closed connection). After a failed write it does not wait: the upstream may have answered
// before it stopped reading, and reading is the way to find out.
func (c *upstreamConn) send(req []byte, timeout time.Duration) (writeErr, err error) {
	if c.raw == nil {
		if _, err := c.conn.Write(req); err != nil {
			return err, nil
		}
		if timeout > 0 {
			return nil, c.conn.SetReadDeadline(time.Now().Add(timeout))
		}
		return nil, nil
	}
	c.out, c.timeout, c.sent, c.writeErr, c.deadlineErr = req, timeout, false, nil, nil
	err = c.raw.Read(c.sendFunc)
	c.out = nil
	if err == nil {
		err = c.deadlineErr
	}
	return c.writeErr, err
}

// writeOut is send's work inside RawConn.Read, which first clears the poller's record of the
// connection being readable and then calls it: the request is written only after that, so the
// answer, which cannot come before the request, is always noticed. (Waiting without that order
// would miss an answer that arrived before the wait began.) The first call writes and asks to
// wait for readability; the next, once readable, ends the wait without reading.
func (c *upstreamConn) writeOut(uintptr) bool {
	if c.sent {
		return true
	}
	c.sent = true
	if _, c.writeErr = c.conn.Write(c.out); c.writeErr != nil {
		return true
	}
	if c.timeout > 0 {
		if c.deadlineErr = c.conn.SetReadDeadline(time.Now().Add(c.timeout)); c.deadlineErr != nil {
			return true
		}
	}
	return false
}

// noReadLimit lifts the header bound once the headers are read.
const noReadLimit = -1

// maxHeaderBytes bounds an upstream's status line and headers, as http.Transport's default does.
const maxHeaderBytes = 10 << 20

// connReader counts what is read from the connection and bounds it while headers are read.
type connReader struct {
	c net.Conn
	// n is the number of bytes read since the exchange began: 0 proves the upstream sent
	// nothing of an answer.
	n int64
	// limit is how many more bytes may be read; noReadLimit for no bound.
	limit int64
}

func (r *connReader) Read(p []byte) (int, error) {
	if r.limit != noReadLimit {
		if r.limit <= 0 {
			return 0, fmt.Errorf("upstream response headers exceed %d bytes", maxHeaderBytes)
		}
		if int64(len(p)) > r.limit {
			p = p[:r.limit]
		}
	}
	n, err := r.c.Read(p)
	r.n += int64(n)
	if r.limit != noReadLimit {
		r.limit -= int64(n)
	}
	return n, err
}
