// Package upload receives a large request body before anything is done with it: the body is
// spooled to a temporary file (bounded by the route's body limit, a pause in it bounded, the whole
// of it bounded) while the request holds no database connection, and the uploads in progress are
// bounded per API key and in all. A slow or stalled client then costs a goroutine and a file, never
// a connection of the service's pool.
package upload

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"
)

// Limits bound the uploads a process receives.
type Limits struct {
	// PerKey is how many uploads one API key may have in progress; Total how many all keys may.
	PerKey, Total int
	// Stall is the longest pause in a body; Whole bounds the whole body's arrival.
	Stall, Whole time.Duration
	// Dir is where bodies are spooled ("" for the system's temporary directory).
	Dir string
}

// RetryAfter is the Retry-After of an upload refused because too many are in progress: an upload
// of a few MiB takes seconds.
const RetryAfter = 5 * time.Second

// Gate counts the uploads in progress.
type Gate struct {
	limits Limits
	mu     sync.Mutex
	total  int
	byKey  map[int64]int
}

// NewGate is a gate admitting uploads within limits.
func NewGate(limits Limits) *Gate {
	limits.PerKey, limits.Total = max(limits.PerKey, 1), max(limits.Total, 1)
	return &Gate{limits: limits, byKey: map[int64]int{}}
}

// Limits are the gate's limits.
func (g *Gate) Limits() Limits { return g.limits }

// Enter admits an upload of key, or refuses it with 429 when key has PerKey uploads in progress
// already, or the process Total. Both are 429, not 503: the service is well, the caller is asked
// to send this upload later (Retry-After). leave ends the upload.
func (g *Gate) Enter(key int64) (leave func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.byKey[key] >= g.limits.PerKey:
		return nil, apperr.New(apperr.RateLimited, "uploads: this API key has %d imports being uploaded already (at most %d at once); send this one when one of them has been answered",
			g.byKey[key], g.limits.PerKey)
	case g.total >= g.limits.Total:
		return nil, apperr.New(apperr.RateLimited, "uploads: the service is receiving as many imports as it takes at once (%d); send this one again in a few seconds",
			g.limits.Total)
	}
	g.total++
	g.byKey[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.total--
			if g.byKey[key]--; g.byKey[key] == 0 {
				delete(g.byKey, key)
			}
		})
	}, nil
}

// Refused reports whether err is Enter's refusal, which is answered with Retry-After.
func Refused(err error) bool { return apperr.KindOf(err) == apperr.RateLimited }

// SetRetryAfter puts RetryAfter on an answer Enter refused.
func SetRetryAfter(h http.Header) { h.Set("Retry-After", strconv.Itoa(int(RetryAfter/time.Second))) }

// File is a spooled body; Close removes it.
type File struct {
	*os.File
	Size int64
}

// Close closes and removes the file.
func (f *File) Close() error {
	cerr := f.File.Close()
	if err := os.Remove(f.Name()); err != nil {
		return fmt.Errorf("remove spooled upload: %w", err)
	}
	return cerr
}

// Spool copies body into a temporary file in limits.Dir and returns it read from its start. Each
// read of the body must bring a byte within limits.Stall and the whole body arrive within
// limits.Whole, both as read deadlines of w's connection: a body past either is refused with 408,
// one past the route's body limit with 413 (web.BodyReadError). w must be the request's own writer;
// one that cannot set deadlines (a test recorder) leaves the body unbounded in time.
func Spool(w http.ResponseWriter, body io.Reader, limits Limits) (*File, error) {
	f, err := os.CreateTemp(limits.Dir, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool upload: %w", err)
	}
	out := &File{File: f}
	r := &stallReader{r: body, rc: http.NewResponseController(w), stall: limits.Stall, whole: limits.Whole}
	if limits.Whole > 0 {
		r.end = time.Now().Add(limits.Whole)
	}
	out.Size, err = io.Copy(f, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = out.Close()
		if web.IsReadTimeout(err) {
			return nil, r.timeout()
		}
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			return nil, fmt.Errorf("spool upload: %w", err)
		}
		return nil, web.BodyReadError(err)
	}
	return out, nil
}

// stallReader moves the connection's read deadline before every read: the next byte is due
// within stall, and none after end (when set).
type stallReader struct {
	r            io.Reader
	rc           *http.ResponseController
	stall, whole time.Duration
	end          time.Time
	// wholeDue: the last deadline set was end's, not a pause's.
	wholeDue bool
}

func (s *stallReader) Read(p []byte) (int, error) {
	if s.stall > 0 || !s.end.IsZero() {
		d := s.end
		s.wholeDue = true
		if t := time.Now().Add(s.stall); s.stall > 0 && (d.IsZero() || t.Before(d)) {
			d, s.wholeDue = t, false
		}
		_ = s.rc.SetReadDeadline(d) // a writer without deadlines: nothing to bound
	}
	return s.r.Read(p)
}

// timeout is the answer to a read that ran into the deadline: the whole body too slow, or a pause
// too long.
func (s *stallReader) timeout() error {
	if s.wholeDue {
		return apperr.New(apperr.RequestTimeout, "body: not received within %s; send the file at once, not piece by piece", s.whole)
	}
	return apperr.New(apperr.RequestTimeout, "body: nothing arrived for %s; send the file without pausing", s.stall)
}
