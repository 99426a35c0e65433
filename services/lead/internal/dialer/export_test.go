package dialer

// LeaseDue is the lease statement, for the test that reads its plan.
const LeaseDue = leaseDue
