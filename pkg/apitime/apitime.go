// Package apitime is how the API writes and bounds instants: RFC 3339 in whole seconds, UTC, in
// the years 0001 to 9999. Stores and views import it to write times without pulling in HTTP.
package apitime

import "time"

// Layout is how the API writes instants: RFC 3339 in whole seconds with a numeric zone, UTC
// (so `2026-11-21T10:00:00+00:00`, as the contract shows).
const Layout = "2006-01-02T15:04:05-07:00"

// String is t as the API writes it.
func String(t time.Time) string { return t.UTC().Format(Layout) }

// StringOrNull is t as the API writes it, or nil (JSON null) when there is none.
func StringOrNull(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := String(*t)
	return &s
}

// The instants the platform accepts: RFC 3339 writes years 0001 to 9999 only, and PostgreSQL, which
// keeps microseconds, refuses a year 0000 and rounds anything past the last microsecond of 9999
// into the year 10000, which the API could not write back. A time is checked in UTC, after its
// offset is applied: 9999-12-31T23:59:59-14:00 is 10000-01-01T13:59:59Z and out.
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC)
)

// RangeRule is the rule a time outside the range breaks, for the field error that names it.
const RangeRule = "must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z once in UTC"

// InRange reports whether t lies in the years 0001 to 9999 in UTC: the one check of every time
// the platform decodes (API bodies and queries, queue events) before it is used or stored.
func InRange(t time.Time) bool { return !t.Before(minTime) && !t.After(maxTime) }
