package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"ccplatform/pkg/logging"

	"go.uber.org/zap"
)

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
