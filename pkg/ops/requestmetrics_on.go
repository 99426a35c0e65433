//go:build !benchnometrics

package ops

// RequestMetrics is true in every build but the benchmark's variant (build tag benchnometrics),
// which `make bench` runs beside the real binaries to measure what request metrics cost.
const RequestMetrics = true
