//go:build !linux

package proxy

// peek cannot look at the socket here; the connection is taken as open, and a request that finds
// it closed is retried on a new connection where that is safe.
func (c *upstreamConn) peek(uintptr) bool {
	c.peekOpen = true
	return true
}
