package web

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A paced body ends in a read timeout after a pause over stall, or once end has passed however
// the bytes keep coming; one that arrives at its pace is read whole.
func TestPacedBody(t *testing.T) {
	type result struct {
		n      int64
		err    error
		endDue bool
	}
	results := make(chan result, 1)
	var stall, whole time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := NewPacedBody(w, r.Body, stall, time.Now().Add(whole))
		n, err := io.Copy(io.Discard, p)
		results <- result{n, err, p.EndDue()}
	}))
	defer srv.Close()
	send := func(pause time.Duration, bytes int, endDue bool) {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
		require.NoError(t, err)
		for range bytes {
			_, _ = conn.Write([]byte("a"))
			time.Sleep(pause)
		}
		r := <-results
		switch bytes {
		case 10:
			assert.NoError(t, r.err)
			assert.Equal(t, int64(10), r.n)
		default:
			assert.True(t, IsReadTimeout(r.err), "%v", r.err)
			assert.Equal(t, endDue, r.endDue)
		}
	}

	stall, whole = 300*time.Millisecond, time.Minute
	send(10*time.Millisecond, 10, false)
	send(10*time.Millisecond, 3, false) // then nothing
	stall, whole = time.Second, 300*time.Millisecond
	start := time.Now()
	send(100*time.Millisecond, 9, true) // never the tenth byte: the end comes first
	assert.Less(t, time.Since(start), 2*time.Second)
}
