package web

import (
	"io"
	"net/http"
	"time"
)

// PacedBody bounds how a request body arrives, through the read deadline of the request's
// connection: every read must bring a byte within stall, and none may come after end (the zero
// time: no end). An upload route uses it instead of the server's read timeout, which is sized for
// small bodies and would cut a large one arriving at a fair pace, while a client pausing for good
// would hold the request as long as the route's whole bound.
// Once the body is read to its end, net/http lifts the deadline itself as it starts watching the
// connection for the client going away: a handler's work after the body is not bounded by it.
type PacedBody struct {
	body  io.Reader
	rc    *http.ResponseController
	stall time.Duration
	end   time.Time
	// endDue: the last deadline set was end's, not a pause's.
	endDue bool
}

// NewPacedBody paces body, the request's own, through w, its writer (one that cannot set
// deadlines, a test recorder, leaves it unbounded in time).
func NewPacedBody(w http.ResponseWriter, body io.Reader, stall time.Duration, end time.Time) *PacedBody {
	return &PacedBody{body: body, rc: http.NewResponseController(w), stall: stall, end: end}
}

func (p *PacedBody) Read(b []byte) (int, error) {
	if p.stall > 0 || !p.end.IsZero() {
		d := p.end
		p.endDue = true
		if t := time.Now().Add(p.stall); p.stall > 0 && (d.IsZero() || t.Before(d)) {
			d, p.endDue = t, false
		}
		_ = p.rc.SetReadDeadline(d)
	}
	return p.body.Read(b)
}

// Close closes the body when it is a Closer.
func (p *PacedBody) Close() error {
	if c, ok := p.body.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// EndDue reports whether a read that timed out ran into end rather than a pause over stall.
func (p *PacedBody) EndDue() bool { return p.endDue }
