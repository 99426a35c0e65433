//go:build benchnometrics

package ops

// RequestMetrics is false only in the benchmark's variant (built with -tags benchnometrics beside
// the real one): requests are neither counted nor timed, by HTTPMetrics or the gateway's upstream
// metrics. Never shipped.
const RequestMetrics = false
