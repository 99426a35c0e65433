package apperr

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnreachableClassifiesConnectionFailures(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain error", errors.New("boom"), false},
		{"dial refused, wrapped", fmt.Errorf("idempotency claim: %w", refused), true},
		{"reset", fmt.Errorf("query: %w", syscall.ECONNRESET), true},
		{"broken pipe", syscall.EPIPE, true},
		{"bad connection", fmt.Errorf("begin: %w", driver.ErrBadConn), true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"admin shutdown 57P01", &pq.Error{Code: "57P01"}, true},
		{"crash shutdown 57P02", &pq.Error{Code: "57P02"}, true},
		{"starting up 57P03", fmt.Errorf("x: %w", &pq.Error{Code: "57P03"}), true},
		{"too many connections 53300", &pq.Error{Code: "53300"}, true},
		{"connection failure 08006", &pq.Error{Code: "08006"}, true},
		{"unique violation 23505", &pq.Error{Code: "23505"}, false},
		{"undefined table 42P01", &pq.Error{Code: "42P01"}, false},
		{"query canceled 57014", &pq.Error{Code: "57014"}, false},
		{"context canceled", context.Canceled, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Unreachable(c.err))
		})
	}
}

// TestUnreachableOfARealRefusedDatabase asks lib/pq for a database on a port nothing listens on:
// the error it really gives is classified, not only the values built above.
func TestUnreachableOfARealRefusedDatabase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	conn, err := sql.Open("postgres", "postgres://cc@"+addr+"/cc?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = conn.PingContext(ctx)
	require.Error(t, err)
	assert.True(t, Unreachable(err), "%v", err)
	assert.Equal(t, Internal, KindOf(err), "the kind itself is left alone: web.ErrorEnvelope decides the status")
}
