// Package gwmetrics declares the gateway's own metrics (docs/operations.md) in one place; main
// registers them and hands each to the part that counts it.
package gwmetrics

import (
	"ccplatform/pkg/ops"

	"github.com/prometheus/client_golang/prometheus"
)

// Set is every gateway-specific metric.
type Set struct {
	AuthHits, AuthMisses prometheus.Counter
	// AuthRefusals counts 401/403/503 refusals before forwarding, by reason: missing_key,
	// unknown_key (unknown, revoked or expired: the user service does not say which),
	// user_unavailable, forbidden.
	AuthRefusals *prometheus.CounterVec
	// RateLimited counts 429 answers by limiter: key, auth_failure, streams.
	RateLimited *prometheus.CounterVec
	// Upstream requests, their durations and their failures by kind.
	UpstreamRequests *prometheus.CounterVec
	UpstreamDuration *prometheus.HistogramVec
	UpstreamErrors   *prometheus.CounterVec
}

// New registers the set on reg.
func New(reg prometheus.Registerer) *Set {
	lookups := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_auth_cache_lookups_total",
		Help: "API key lookups in the gateway's cache, by result (hit, miss).",
	}, []string{"result"})
	s := &Set{
		AuthHits:   lookups.WithLabelValues("hit"),
		AuthMisses: lookups.WithLabelValues("miss"),
		AuthRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_auth_refusals_total",
			Help: "Requests refused by authentication or authorization, by reason.",
		}, []string{"reason"}),
		RateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_rate_limit_rejections_total",
			Help: "Requests answered 429, by limiter (key, auth_failure, streams).",
		}, []string{"limiter"}),
		UpstreamRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_upstream_requests_total",
			Help: "Requests forwarded to a service, by service and the status class answered.",
		}, []string{"upstream", "status_class"}),
		UpstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gateway_upstream_request_duration_seconds",
			Help:    "Time from forwarding a request to a service to the end of its answer.",
			Buckets: ops.DurationBuckets,
		}, []string{"upstream"}),
		UpstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_upstream_errors_total",
			Help: "Forwards that got no valid answer, by service and kind (timeout, refused, reset, canceled, other).",
		}, []string{"upstream", "kind"}),
	}
	reg.MustRegister(lookups, s.AuthRefusals, s.RateLimited, s.UpstreamRequests, s.UpstreamDuration, s.UpstreamErrors)
	// Every label value known in advance starts at 0, so that rate() sees the first refusal.
	for _, r := range []string{"missing_key", "unknown_key", "user_unavailable", "forbidden"} {
		s.AuthRefusals.WithLabelValues(r)
	}
	for _, l := range []string{"key", "auth_failure", "streams"} {
		s.RateLimited.WithLabelValues(l)
	}
	return s
}
