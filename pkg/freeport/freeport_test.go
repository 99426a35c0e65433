package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every address is on loopback, below the kernel's ephemeral ports, bindable, and never handed out
// twice by one process.
func TestAddrsAreFreeLowAndNeverTheSameTwice(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		addr, err := Addr()
		require.NoError(t, err)
		host, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		assert.Equal(t, "127.0.0.1", host)
		n, err := strconv.Atoi(port)
		require.NoError(t, err)
		assert.True(t, n >= low && n < high, "port %d outside [%d, %d)", n, low, high)
		assert.False(t, seen[addr], "%s handed out twice", addr)
		seen[addr] = true
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err, "the address is free")
		require.NoError(t, ln.Close())
	}
}
