package web

import "time"

// TimeLayout is how the API writes instants: RFC 3339 in whole seconds with a numeric zone, UTC
// (so `2026-11-21T10:00:00+00:00`, as the contract shows).
const TimeLayout = "2006-01-02T15:04:05-07:00"

// Time is t as the API writes it.
func Time(t time.Time) string { return t.UTC().Format(TimeLayout) }

// TimeOrNull is t as the API writes it, or nil (JSON null) when there is none.
func TimeOrNull(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}
