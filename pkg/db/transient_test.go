package db

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"ccplatform/pkg/apperr"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
)

func TestTransientRetriesAllButDecisions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		transient bool
	}{
		{"no error", nil, false},
		{"connection cut", io.ErrUnexpectedEOF, true},
		{"bad connection", driver.ErrBadConn, true},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"deadline", context.DeadlineExceeded, true},
		{"shutdown", &pq.Error{Code: "57P01"}, true},
		{"deadlock", &pq.Error{Code: "40P01"}, true},
		{"too many connections", &pq.Error{Code: "53300"}, true},
		{"unique key taken by a concurrent writer", fmt.Errorf("insert: %w", &pq.Error{Code: "23505"}), true},
		{"service unavailable", apperr.New(apperr.Unavailable, "order service down"), true},
		{"service failing", apperr.New(apperr.Internal, "order service answered 500"), true},
		{"bad gateway", apperr.New(apperr.BadGateway, "order service answered garbage"), true},
		{"forbidden", apperr.New(apperr.Forbidden, "agents may not create leads here"), false},
		{"unknown error", errors.New("something odd"), true},
		{"invalid value", &pq.Error{Code: "22P02"}, false},
		{"foreign key", fmt.Errorf("insert: %w", &pq.Error{Code: "23503"}), false},
		{"check constraint", &pq.Error{Code: "23514"}, false},
		{"undefined column", &pq.Error{Code: "42703"}, false},
		{"raised by a function", &pq.Error{Code: "P0001"}, false},
		{"internal", &pq.Error{Code: "XX000"}, false},
		{"invalid input", apperr.Field("phone", "must be a phone number"), false},
		{"not found", apperr.NotFoundf("user 4 does not exist"), false},
	} {
		assert.Equal(t, tc.transient, Transient(tc.err), tc.name)
	}
}

func TestWriteSplittingNarrowsARefusedBatchDownToItsBadItem(t *testing.T) {
	refused := &pq.Error{Code: "23514"}
	var calls [][]int
	var split error
	errs := WriteSplitting(3, func(items []int) error {
		calls = append(calls, items)
		for _, i := range items {
			if i == 1 {
				return refused
			}
		}
		return nil
	}, func(err error) { split = err })
	assert.Equal(t, [][]int{{0, 1, 2}, {0}, {1}, {2}}, calls)
	assert.Equal(t, []error{nil, refused, nil}, errs)
	assert.Equal(t, refused, split)
}

func TestWriteSplittingRetriesEverythingOnATransientFault(t *testing.T) {
	calls := 0
	errs := WriteSplitting(2, func([]int) error { calls++; return driver.ErrBadConn }, func(error) { t.Fatal("no split on a transient fault") })
	assert.Equal(t, 1, calls)
	assert.Equal(t, []error{driver.ErrBadConn, driver.ErrBadConn}, errs)

	errs = WriteSplitting(2, func([]int) error { return nil }, nil)
	assert.Equal(t, []error{nil, nil}, errs)
	assert.Empty(t, WriteSplitting(0, func([]int) error { t.Fatal("nothing to write"); return nil }, nil))
}

// A proxy in front of the database (HAProxy while no node is writable, during a failover) accepts
// the connection, takes the client's startup message and closes it before the server's first word. The driver reports that as a bare
// io.EOF, which neither database/sql's retry of a bad connection nor the 503 of an unreachable
// dependency recognised: the services answered 500 during the switch.
func TestConnectionClosedAtStartupIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// The whole startup message (its length first), so that the close is a clean end of
			// the stream rather than a reset.
			var size [4]byte
			if _, err := io.ReadFull(c, size[:]); err == nil {
				_, _ = io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:]))-4)
			}
			_ = c.Close()
		}
	}()
	_, err = Open(context.Background(), "postgres://cc:cc@"+ln.Addr().String()+"/cc?sslmode=disable", "public", 1)
	if err == nil {
		t.Fatal("opened a pool on a proxy that closes every connection")
	}
	assert.ErrorIs(t, err, driver.ErrBadConn)
	assert.True(t, apperr.Unreachable(err), "unreachable: %v", err)
	assert.True(t, Transient(err), "transient: %v", err)
}
