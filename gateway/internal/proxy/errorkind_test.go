package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestErrorKindNamesTheFailure(t *testing.T) {
	dial := &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	read := &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for err, want := range map[error]string{
		dial:                                  "refused",
		fmt.Errorf("forward: %w", dial):       "refused",
		context.DeadlineExceeded:              "timeout",
		read:                                  "reset",
		io.ErrUnexpectedEOF:                   "reset",
		fmt.Errorf("x: %w", context.Canceled): "canceled",
		errors.New("malformed HTTP response"): "other",
	} {
		assert.Equal(t, want, ErrorKind(err), "%v", err)
	}
}

// Every kind ErrorKind can return is listed in ErrorKinds, and a route's handler makes its
// upstream's error series, at 0, so that a fresh gateway exports gateway_upstream_errors_total.
func TestUpstreamErrorSeriesStartAtZero(t *testing.T) {
	assert.ElementsMatch(t, []string{"timeout", "refused", "reset", "canceled", "other"}, ErrorKinds)
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_upstream_errors_total"}, []string{"upstream", "kind"})
	p := New(Config{UpstreamTimeout: time.Second, Metrics: Metrics{Errors: errs}}, zap.NewNop())
	base, err := url.Parse("http://127.0.0.1:1")
	require.NoError(t, err)
	p.Handler(Target{Service: "order", Base: base})
	assert.Equal(t, len(ErrorKinds), testutil.CollectAndCount(errs))
	for _, k := range ErrorKinds {
		assert.Zero(t, testutil.ToFloat64(errs.WithLabelValues("order", k)), k)
	}
}
