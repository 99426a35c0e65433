package dialer

// LeaseDue is the lease statement, for the test that reads its plan.
var LeaseDue = leaseDue
