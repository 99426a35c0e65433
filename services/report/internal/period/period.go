// Package period reads a report's time parameters: from, to, interval and tz, into the intervals it
// answers (bucket), with the rules a 400 names.
package period

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/services/report/internal/bucket"
)

// Period is a report's intervals: Starts[i] to Starts[i+1] is interval i (so len(Starts)-1 of them),
// in the caller's zone Loc.
type Period struct {
	Unit   bucket.Unit
	Loc    *time.Location
	Starts []time.Time
}

// From and To bound the whole period.
func (p Period) From() time.Time { return p.Starts[0] }

// To is the end of the last interval.
func (p Period) To() time.Time { return p.Starts[len(p.Starts)-1] }

// Len is the number of intervals.
func (p Period) Len() int { return len(p.Starts) - 1 }

// MaxRows bounds a report's rows (its orders or agents times its intervals): a page of every order
// by the hour for a month would be 150,000 rows of 200 orders.
const MaxRows = 50_000

// TooManyRows is the 400 of a report that would pass MaxRows.
func TooManyRows(rows int, who string) error {
	return apperr.Field("interval", fmt.Sprintf("the report would have %d rows, more than %d: name fewer %s or take a longer interval", rows, MaxRows, who))
}

// Rules of the parameters, as the 400 names them.
const (
	timeRule     = "must be a date (yyyy-mm-dd, midnight in tz) or an RFC 3339 date-time"
	intervalRule = "must be hour, day or total"
	tzRule       = "must be an IANA time zone name such as Europe/Berlin"
)

// Parse reads from, to, interval (hour when absent) and tz (UTC when absent) from q into fe. from
// is moved back to the start of its interval and to forward to the end of its interval (a
// total: to 15-minute boundaries); the period may then span at most 31 days of hours, 366 of days.
func Parse(q url.Values, fe apperr.FieldErrors) Period {
	p := Period{Unit: bucket.Hour, Loc: time.UTC}
	if v := last(q, "interval"); v != "" {
		switch u := bucket.Unit(v); u {
		case bucket.Hour, bucket.Day, bucket.Total:
			p.Unit = u
		default:
			fe.Add("interval", intervalRule)
		}
	}
	if v := last(q, "tz"); v != "" {
		loc, err := time.LoadLocation(v)
		if err != nil || v == "Local" {
			fe.Add("tz", tzRule)
		} else {
			p.Loc = loc
		}
	}
	from, okFrom := parseTime(q, "from", p.Loc, fe)
	to, okTo := parseTime(q, "to", p.Loc, fe)
	if !okFrom || !okTo || fe.Has("interval") || fe.Has("tz") {
		return p
	}
	if !from.Before(to) {
		fe.Add("to", "must be after from")
		return p
	}
	from, to = p.Unit.Floor(from, p.Loc), p.Unit.Ceil(to, p.Loc)
	max := p.Unit.MaxDays()
	if to.After(from.In(p.Loc).AddDate(0, 0, max)) {
		fe.Add("to", fmt.Sprintf("must be at most %d days after from at interval %s (31 days at hour, 366 at day and total)", max, p.Unit))
		return p
	}
	p.Starts = p.Unit.Intervals(from, to, p.Loc)
	return p
}

func last(q url.Values, name string) string {
	vs := q[name]
	if len(vs) == 0 {
		return ""
	}
	return strings.TrimSpace(vs[len(vs)-1])
}

// parseTime reads a required time: a date is its midnight in loc (or the first instant of that day
// where midnight does not exist).
func parseTime(q url.Values, name string, loc *time.Location, fe apperr.FieldErrors) (time.Time, bool) {
	raw := last(q, name)
	if raw == "" {
		fe.Add(name, "is required")
		return time.Time{}, false
	}
	// A '+' of an offset arrives as a space when the client did not escape it.
	raw = strings.Replace(raw, " ", "+", 1)
	var t time.Time
	if d, err := time.ParseInLocation(time.DateOnly, raw, loc); err == nil {
		t = bucket.Day.Floor(d.Add(12*time.Hour), loc) // the day's first instant, DST-proof
	} else if t, err = time.Parse(time.RFC3339Nano, raw); err != nil {
		fe.Add(name, timeRule)
		return time.Time{}, false
	}
	if !apitime.InRange(t) || t.Year() < 2 || t.Year() > 9998 {
		fe.Add(name, apitime.RangeRule)
		return time.Time{}, false
	}
	return t, true
}
