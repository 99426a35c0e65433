package proxy

import "syscall"

// peek looks at the socket without waiting or consuming: an idle connection has nothing to
// read, so "would block" is the one answer that means it is still open. End of stream (the
// upstream closed it), an error (reset) or stray bytes all make it unusable.
func (c *upstreamConn) peek(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), c.peekBuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	c.peekOpen = err == syscall.EAGAIN
	return true
}
