//go:build !benchnopolicy

package server

// enforcePolicy is true in every build but the benchmark's variant (build tag benchnopolicy,
// scripts/bench), which measures what the route policy costs.
const enforcePolicy = true
