package apperr

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
)

// Unreachable reports whether err says that a dependency (the database, above all) could not be
// reached or dropped the connection: refused, reset or broken connections, a failed dial, and the
// PostgreSQL states of a server that is shutting down, starting up or out of connections. Such a
// failure is not the request's fault and goes away by itself, so it is answered 503 (retry), never
// 500. The check reads the SQLSTATE through its method, so that this package needs no driver.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		return unavailableState(state.SQLState())
	}
	var opErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &opErr)
}

// unavailableState: class 08 (connection exception), 57P01..57P03 (admin or crash shutdown, cannot
// connect now: starting up or in recovery) and 53300 (too many connections).
func unavailableState(code string) bool {
	switch {
	case len(code) == 5 && code[:2] == "08":
		return true
	case code == "57P01", code == "57P02", code == "57P03", code == "53300":
		return true
	}
	return false
}
