package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// serveStreamed forwards a request whose body is not held here (forwarder.streams): the head
// leaves in one write, then a goroutine of its own (a bodySender) passes the body on read by read
// while this one waits for the answer. An answer may come before the body's end (an upstream
// refusing an upload at once, or answering a stalled one): it goes out at once, with the client
// connection closed after it (closesEarly), and the rest of the body is not sent.
func (f *forwarder) serveStreamed(w http.ResponseWriter, r *http.Request) {
	w = &closesEarly{ResponseWriter: w, r: r}
	bp := f.p.requestBufs.get()
	head, err := f.appendHead(*bp, r)
	var res *http.Response
	var uc *upstreamConn
	var s *bodySender
	if err == nil {
		res, uc, s, err = f.roundTripStreamed(w, r, head)
	}
	f.p.requestBufs.put(bp, head)
	if s != nil {
		// After the answer (a failure's too: it goes out while the sender may still wait for the
		// client's body), even if the handler panics to drop a client that went away.
		defer s.stop()
	}
	if err != nil {
		f.fail(w, r, err)
		if s != nil {
			// The answer goes out now, not once the sender has given up on the client's body.
			_ = http.NewResponseController(w).Flush()
		}
		return
	}
	f.respond(w, r, res, uc, s)
}

// roundTripStreamed writes head on a pooled connection, starts the body's sender and reads the
// answer's headers. Only the head's write is tried again on a new connection (a reused one found
// closed): once a byte of the body is read, it cannot be sent again.
func (f *forwarder) roundTripStreamed(w http.ResponseWriter, r *http.Request, head []byte) (*http.Response, *upstreamConn, *bodySender, error) {
	ctx := r.Context()
	uc, err := f.pool.get(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	uc.stopWatch = context.AfterFunc(ctx, uc.abort)
	if _, err := uc.conn.Write(head); err != nil {
		uc.stopWatch()
		uc.close()
		if !uc.reused || ctx.Err() != nil {
			return nil, nil, nil, fmt.Errorf("write request: %w", err)
		}
		if uc, err = f.pool.dial(ctx); err != nil {
			return nil, nil, nil, err
		}
		uc.stopWatch = context.AfterFunc(ctx, uc.abort)
		if _, err := uc.conn.Write(head); err != nil {
			uc.stopWatch()
			uc.close()
			return nil, nil, nil, fmt.Errorf("write request: %w", err)
		}
	}
	s := &bodySender{uc: uc, body: r.Body, chunked: chunkedBody(r), trailer: r.Trailer, timeout: f.timeout,
		buf: f.p.copyBufs, client: http.NewResponseController(w), done: make(chan struct{})}
	go s.run()

	uc.in.n, uc.in.limit = 0, maxHeaderBytes
	uc.br = f.p.readers.Get().(*bufio.Reader)
	uc.br.Reset(&uc.in)
	res, err := readFinalResponse(uc.br, r)
	s.answered()
	if err == nil && f.timeout > 0 {
		// Only the headers are bounded: a body may take as long as the upstream needs.
		err = uc.conn.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.release(uc, false)
		// A body the client could not send (too slow, too large) is the cause, not the upstream's
		// answer that the sender cut by closing the connection.
		if rerr := s.failedRead(); rerr != nil {
			return nil, nil, s, fmt.Errorf("read request body: %w", rerr)
		}
		return nil, nil, s, fmt.Errorf("read response: %w", err)
	}
	uc.in.limit = noReadLimit
	return res, uc, s, nil
}

// bodySender passes a request's body on to the upstream connection as it is read: each read is
// written at once (chunked when the length is unknown or trailers follow), so the upstream sees
// the body arrive as the client sends it and bounds it in its own words.
type bodySender struct {
	uc      *upstreamConn
	body    io.Reader
	chunked bool
	trailer http.Header
	timeout time.Duration
	buf     *slicePool
	// client is the client connection's controller: its read deadline releases a read of the
	// body that waits for bytes the client does not send.
	client *http.ResponseController
	done   chan struct{}

	// mu orders the end of the body, which starts the bound on the answer's headers, against
	// the answer's arrival, which lifts it.
	mu       sync.Mutex
	answer   bool
	complete bool
	// readDone: the client's body was read to its end (or failed); no read of it is left to cut.
	readDone bool
	// readErr is reading the client's body failing (under mu); writeErr writing to the upstream.
	// Both are set before done closes.
	readErr  error
	writeErr error
}

func (s *bodySender) run() {
	defer close(s.done)
	bp := s.buf.get()
	defer s.buf.put(bp, *bp)
	buf := (*bp)[:cap(*bp)]
	bw := bufio.NewWriterSize(s.uc.conn, 512)
	for {
		n, err := s.body.Read(buf)
		if err != nil {
			// Recorded before the last bytes leave: the upstream may answer as soon as it has
			// them, and then no read of the client's body is left for stop to cut.
			s.mu.Lock()
			s.readDone = true
			if err != io.EOF {
				s.readErr = err
			}
			s.mu.Unlock()
		}
		if n > 0 {
			if s.chunked {
				_, _ = bw.WriteString(strconv.FormatInt(int64(n), 16))
				_, _ = bw.WriteString("\r\n")
			}
			_, _ = bw.Write(buf[:n])
			if s.chunked {
				_, _ = bw.WriteString("\r\n")
			}
			if werr := bw.Flush(); werr != nil {
				s.writeErr = werr
				return
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			// The upstream must not take a partial body for a whole one.
			s.uc.close()
			return
		}
	}
	if s.chunked {
		_, _ = bw.WriteString("0\r\n")
		for k, vv := range s.trailer {
			for _, v := range vv {
				if validHeaderValue(v) {
					_, _ = bw.WriteString(k + ": " + v + "\r\n")
				}
			}
		}
		_, _ = bw.WriteString("\r\n")
		if err := bw.Flush(); err != nil {
			s.writeErr = err
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.complete = true
	if !s.answer && s.timeout > 0 {
		// The whole request is out: from now on the upstream's headers are awaited as long as
		// for any request (as http.Transport's ResponseHeaderTimeout starts).
		if err := s.uc.conn.SetReadDeadline(time.Now().Add(s.timeout)); err != nil {
			s.writeErr = err
		}
	}
}

// answered records that the answer's headers arrived (or failed): the sender no longer sets a
// deadline on them.
func (s *bodySender) answered() {
	s.mu.Lock()
	s.answer = true
	s.mu.Unlock()
}

// failedRead is the error reading the client's body ended the sending with, if it did.
func (s *bodySender) failedRead() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readErr
}

// early reports whether the answer came before the whole body left.
func (s *bodySender) early() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.complete
}

// stop ends the sender and waits for it, once the answer is given. Its upstream connection must be
// closed already (a write in progress then fails); a read of the client's body that waits for
// bytes the client does not send is cut by the client connection's read deadline (the connection
// is closed after this answer anyway: closesEarly).
func (s *bodySender) stop() {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		// Only while the body is still being read: the deadline of a connection whose request
		// was read whole must stay, or the server could not read the next request on it. Again
		// until the sender ends, as a read that starts after the deadline was set may set its own
		// (web.PacedBody sets one before every read). An error means the writer cannot change
		// deadlines (a test recorder): its body cannot block.
		s.mu.Lock()
		reading := !s.readDone
		s.mu.Unlock()
		if bw, ok := s.body.(*bodyWatch); ok && bw.ended.Load() {
			// The body's end was seen (closesEarly judged the answer by the same mark), though
			// the sender has not recorded it yet.
			reading = false
		}
		if reading {
			_ = s.client.SetReadDeadline(time.Now())
		}
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}

// ok reports whether the whole body left without error; only then may the connection be reused.
func (s *bodySender) ok() bool {
	<-s.done
	return s.readErr == nil && s.writeErr == nil
}
