// Package bucket is the time grid of the reports: aggregates are kept in 15-minute buckets of UTC,
// and every hour or day of any IANA zone is a whole number of them (every zone's offset, and every
// DST change, is a multiple of 15 minutes), so an interval's figures are the sum of its buckets.
package bucket

import (
	"fmt"
	"time"
)

// Size is the length of a bucket.
const Size = 15 * time.Minute

// Of is the start of the bucket holding t, in UTC.
func Of(t time.Time) time.Time { return t.UTC().Truncate(Size) }

// HourOf is the start of the UTC hour holding t: the grid of the hourly roll-up, four buckets each.
func HourOf(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

// OnHours says whether every time of starts is the start of a UTC hour: then each interval they
// bound is a whole number of the roll-up's hours, and its figures are their sums.
func OnHours(starts []time.Time) bool {
	for _, t := range starts {
		if !HourOf(t).Equal(t) {
			return false
		}
	}
	return true
}

// Unit is how a report cuts its period: hour, day, or one total.
type Unit string

// The units of the interval parameter.
const (
	Hour  Unit = "hour"
	Day   Unit = "day"
	Total Unit = "total"
)

// MaxDays bounds a report's period by its unit: 31 days of hours, 366 of days (or one total).
func (u Unit) MaxDays() int {
	if u == Hour {
		return 31
	}
	return 366
}

// key names the local hour or day of t in loc: an hour includes its offset, so the hour repeated
// when clocks go back is two intervals, as it is two hours.
func (u Unit) key(t time.Time, loc *time.Location) string {
	l := t.In(loc)
	if u == Hour {
		_, off := l.Zone()
		return fmt.Sprintf("%d-%d-%d %d %d", l.Year(), l.Month(), l.Day(), l.Hour(), off)
	}
	return fmt.Sprintf("%d-%d-%d", l.Year(), l.Month(), l.Day())
}

// Floor is the start of the interval of unit u in loc holding t (for Total, t's bucket).
func (u Unit) Floor(t time.Time, loc *time.Location) time.Time {
	b := Of(t)
	if u == Total {
		return b
	}
	k := u.key(b, loc)
	for u.key(b.Add(-Size), loc) == k {
		b = b.Add(-Size)
	}
	return b
}

// Ceil is the end of the interval of unit u in loc that holds the instant just before t (t itself
// when t starts an interval).
func (u Unit) Ceil(t time.Time, loc *time.Location) time.Time {
	b := Of(t)
	if b.Before(t) {
		b = b.Add(Size)
	}
	if u == Total {
		return b
	}
	k := u.key(b.Add(-Size), loc)
	for u.key(b, loc) == k {
		b = b.Add(Size)
	}
	return b
}

// Intervals are the starts of the intervals of unit u in loc covering [from, to) and the end of the
// last; from and to must be interval boundaries (Floor, Ceil). A Total is one interval.
func (u Unit) Intervals(from, to time.Time, loc *time.Location) []time.Time {
	if u == Total {
		return []time.Time{from, to}
	}
	starts := []time.Time{from}
	k := u.key(from, loc)
	for b := from.Add(Size); b.Before(to); b = b.Add(Size) {
		if nk := u.key(b, loc); nk != k {
			starts = append(starts, b)
			k = nk
		}
	}
	return append(starts, to)
}
