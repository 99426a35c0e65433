//go:build benchnopolicy

package server

// enforcePolicy is false only in the benchmark's variant of the gateway (scripts/bench builds it
// with -tags benchnopolicy beside the real one): every route is open to every verified key. Never
// deploy this build.
const enforcePolicy = false
