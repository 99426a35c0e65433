// Package freeport hands tests and the bench local addresses to start servers on.
package freeport

import (
	"fmt"
	mrand "math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// handedOut are the ports Addr returned in this process (process-wide, as ports are).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// The range Addr draws from: below Linux's ephemeral ports, above the well-known services.
const (
	low  = 20000
	high = 32000
)

// Addr is a local address (127.0.0.1:port) nothing listens on at the moment.
func Addr() (string, error) {
	// A port the kernel hands out for port 0 (httptest servers, outgoing connections of other test
	// packages running at the same time) can be taken again between this check and the process's
	// own bind, and a stranger answering the health route would pass for the process. Ports below
	// the ephemeral range (32768-60999 on Linux) are never handed out that way.
	// A port already handed out is not handed out again by this process: its owner may not have
	// bound it yet.
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 200 {
		port := low + mrand.IntN(high-low)
		if handedOut.ports[port] {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		handedOut.ports[port] = true
		return addr, nil
	}
	return "", fmt.Errorf("free port: none free between %d and %d", low, high)
}
