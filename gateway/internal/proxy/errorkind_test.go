package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
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
