package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"

	"ccplatform/gateway/internal/auth"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
)

func TestClassify(t *testing.T) {
	dialRefused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	dialTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	cases := []struct {
		name   string
		err    error
		status int
		msg    string
	}{
		{"refused", dialRefused, http.StatusServiceUnavailable, "order service is unavailable"},
		{"dial timeout", dialTimeout, http.StatusServiceUnavailable, "order service is unavailable"},
		{"header timeout", timeoutErr{}, http.StatusGatewayTimeout, "order service did not answer in time"},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), http.StatusGatewayTimeout, "order service did not answer in time"},
		{"reset", reset, http.StatusBadGateway, "order service gave no valid answer"},
		{"eof", io.ErrUnexpectedEOF, http.StatusBadGateway, "order service gave no valid answer"},
		{"body too large", &http.MaxBytesError{Limit: 10}, http.StatusRequestEntityTooLarge, "body: must be at most 10 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := Classify("order", tc.err)
			assert.Equal(t, tc.status, f.Kind.Status())
			assert.Equal(t, tc.msg, f.Message)
			assert.ErrorIs(t, f, tc.err, "the cause is kept for the logs")
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var _ net.Error = timeoutErr{}

func TestForwardHeadersReplaceClientIdentity(t *testing.T) {
	h := http.Header{}
	h.Set("X-User-Id", "999")
	h.Set("X-Access-Group", "admin")
	h.Set("X-Internal-Token", "guessed")
	h.Set("X-Api-Key", "raw-key")
	h.Set("X-Other", "kept")

	forwardHeaders(h, auth.Identity{UserID: 7, AccessGroup: "client"}, "req-1", "secret")
	assert.Equal(t, []string{"7"}, h.Values("X-User-Id"))
	assert.Equal(t, []string{"client"}, h.Values("X-Access-Group"))
	assert.Equal(t, []string{"secret"}, h.Values("X-Internal-Token"))
	assert.Equal(t, "req-1", h.Get("X-Request-Id"))
	assert.Empty(t, h.Values("X-Api-Key"))
	assert.Equal(t, "kept", h.Get("X-Other"))
}

// Both forwarding paths drop every identity header a client sends and write the same ones.
func TestOneIdentityRuleForBothPaths(t *testing.T) {
	id := auth.Identity{UserID: 7, AccessGroup: "agent", KeyID: 3, Scopes: []string{"leads:read", "calls:read"}}
	h := http.Header{}
	for _, k := range identityHeaderNames {
		assert.True(t, dropRequestHeader(k), "the forwarder copies no client %s", k)
		h.Set(k, "from the client")
	}
	forwardHeaders(h, id, "", "secret")
	hs, n := identityHeaders(id, "secret")
	want := http.Header{}
	for _, hd := range hs[:n] {
		want.Set(hd.key, hd.value)
	}
	assert.Equal(t, want, h)
	assert.Equal(t, "7", h.Get("X-User-Id"))
	assert.Equal(t, "leads:read,calls:read", h.Get("X-Key-Scopes"))
}

func TestForwardHeadersWithoutIdentityDropsClientValues(t *testing.T) {
	h := http.Header{}
	h.Set("X-User-Id", "999")
	h.Set("X-Access-Group", "admin")
	forwardHeaders(h, auth.Identity{}, "", "secret")
	assert.Empty(t, h.Values("X-User-Id"))
	assert.Empty(t, h.Values("X-Access-Group"))
	assert.Equal(t, "secret", h.Get("X-Internal-Token"))
}

func TestBufferPool(t *testing.T) {
	bp := newBufferPool(1024)
	b := bp.Get()
	assert.Len(t, b, 1024)
	bp.Put(b[:10])
	assert.Len(t, bp.Get(), 1024, "a returned buffer comes back at full size")
	bp.Put(make([]byte, 5)) // too small: dropped, not handed out
	assert.Len(t, bp.Get(), 1024)
}

func TestErrorsDoNotLeakCause(t *testing.T) {
	err := fmt.Errorf("dial tcp 10.1.2.3:8082: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")})
	rec := httptest.NewRecorder()
	web.WriteError(rec, Classify("lead", err))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.JSONEq(t, `{"success":false,"message":"lead service is unavailable","data":[]}`, rec.Body.String())
}
