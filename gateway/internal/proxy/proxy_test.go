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

// Every identity header a client sends is dropped, and the gateway writes its own.
func TestOneIdentityRule(t *testing.T) {
	for _, k := range identityHeaderNames {
		assert.True(t, dropRequestHeader(k), "the forwarder copies no client %s", k)
	}
	hs, n := identityHeaders(auth.Identity{UserID: 7, AccessGroup: "agent", KeyID: 3, Scopes: []string{"leads:read", "calls:read"}}, "secret")
	got := http.Header{}
	for _, hd := range hs[:n] {
		got.Set(hd.key, hd.value)
	}
	assert.Equal(t, http.Header{"X-User-Id": {"7"}, "X-Access-Group": {"agent"}, "X-Key-Id": {"3"},
		"X-Key-Scopes": {"leads:read,calls:read"}, "X-Internal-Token": {"secret"}}, got)
	hs, n = identityHeaders(auth.Identity{}, "secret")
	assert.Equal(t, []header{{"X-Internal-Token", "secret"}}, hs[:n], "without a verified key, only the token")
}

func TestErrorsDoNotLeakCause(t *testing.T) {
	err := fmt.Errorf("dial tcp 10.1.2.3:8082: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")})
	rec := httptest.NewRecorder()
	web.WriteError(rec, Classify("lead", err))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.JSONEq(t, `{"success":false,"message":"lead service is unavailable","data":[]}`, rec.Body.String())
}
