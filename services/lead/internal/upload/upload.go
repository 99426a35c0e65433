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
// limits.Whole (web.PacedBody, through w, the request's own writer): a body past either is refused
// with 408, one past the route's body limit with 413 (web.BodyReadError).
func Spool(w http.ResponseWriter, body io.Reader, limits Limits) (*File, error) {
	f, err := os.CreateTemp(limits.Dir, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool upload: %w", err)
	}
	out := &File{File: f}
	var end time.Time
	if limits.Whole > 0 {
		end = time.Now().Add(limits.Whole)
	}
	paced := web.NewPacedBody(w, body, limits.Stall, end)
	out.Size, err = io.Copy(f, paced)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = out.Close()
		var pathErr *os.PathError
		switch {
		case web.IsReadTimeout(err) && paced.EndDue():
			return nil, apperr.New(apperr.RequestTimeout, "body: not received within %s; send the file at once, not piece by piece", limits.Whole)
		case web.IsReadTimeout(err):
			return nil, apperr.New(apperr.RequestTimeout, "body: nothing arrived for %s; send the file without pausing", limits.Stall)
		case errors.As(err, &pathErr):
			return nil, fmt.Errorf("spool upload: %w", err)
		}
		return nil, web.BodyReadError(err)
	}
	return out, nil
}
