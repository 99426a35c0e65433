package callresult

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"ccplatform/services/lead/internal/orders"
)

// Call outcomes: the codes of the call-status catalog (services/call, migration 00001), which
// call.finished carries as statusCode.
const (
	OutcomeAnswered      = "answered"
	OutcomeNoAnswer      = "no_answer"
	OutcomeBusy          = "busy"
	OutcomeFailed        = "failed"
	OutcomeVoicemail     = "voicemail"
	OutcomeRejected      = "rejected"
	OutcomeCancelled     = "cancelled"
	OutcomeInvalidNumber = "invalid_number"
	OutcomeAbandoned     = "abandoned"
)

// Lead status codes the rules read or set (lead migration 00001).
const (
	StatusCallback    = "callback"
	StatusNoAnswer    = "no_answer"
	StatusBusy        = "busy"
	StatusWrongNumber = "wrong_number"
)

// Lead is what the rules read of a lead.
type Lead struct {
	StatusCode string
	// Final is true when the status's category is success or failure: calls no longer change it.
	Final    bool
	Attempts int
	// UTCOffset is the client's offset from UTC in whole hours, nil when unknown.
	UTCOffset      *int
	PlanningCallAt *time.Time
	// LastCallEndedAt is the end of the latest call applied to the lead, nil before the first.
	LastCallEndedAt *time.Time
}

// Call is a finished call of the lead.
type Call struct {
	Outcome string
	EndedAt time.Time
}

// Change is what a call does to its lead: the fields to store.
type Change struct {
	Attempts        int
	StatusCode      string
	NextCallAt      *time.Time
	LastCallEndedAt *time.Time
	// Late is true when the call ended before a call already applied: it is only counted.
	Late bool
}

// TrustedLastCall is the end of the lead's last call as the ordering of its calls reads it, at now:
// nil when it lies more than MaxClockSkew ahead. Such a date is a clock error of the platform (one
// stored before such calls were refused), and kept it would make every real call that follows look
// late, so that none of them could change the lead again.
func TrustedLastCall(last *time.Time, now time.Time) *time.Time {
	if last == nil || last.After(now.Add(MaxClockSkew)) {
		return nil
	}
	return last
}

// Apply is the effect of call c on lead l under the order's rules r (services/lead/README.md,
// "Call results").
func Apply(l Lead, c Call, r Rules) Change {
	ch := Change{Attempts: l.Attempts + 1, StatusCode: l.StatusCode, NextCallAt: l.PlanningCallAt, LastCallEndedAt: l.LastCallEndedAt}
	if l.LastCallEndedAt != nil && c.EndedAt.Before(*l.LastCallEndedAt) {
		// Events of one lead may arrive out of order (redeliveries, parallel consumers): an older
		// call must not overwrite what a newer one decided.
		ch.Late = true
		return ch
	}
	ended := c.EndedAt
	ch.LastCallEndedAt = &ended
	if l.Final {
		ch.NextCallAt = nil
		return ch
	}
	if r.ResetAttemptsEnabled && l.StatusCode == StatusCallback {
		// The client asked to be called back: the series of attempts starts over.
		ch.Attempts = 1
	}
	next := func(attempt int) *time.Time { return r.NextCall(c.EndedAt, attempt, l.UTCOffset) }
	switch c.Outcome {
	case OutcomeInvalidNumber:
		ch.StatusCode, ch.NextCallAt = StatusWrongNumber, nil
	case OutcomeBusy:
		ch.StatusCode, ch.NextCallAt = StatusBusy, next(ch.Attempts)
	case OutcomeNoAnswer, OutcomeVoicemail, OutcomeCancelled, OutcomeRejected, OutcomeFailed:
		ch.StatusCode, ch.NextCallAt = StatusNoAnswer, next(ch.Attempts)
	case OutcomeAnswered:
		switch {
		case l.StatusCode != StatusCallback:
			// A person talked: what comes next is the agent's disposition (the update API).
			ch.NextCallAt = nil
		case l.PlanningCallAt != nil && l.PlanningCallAt.After(c.EndedAt):
			// The agent already chose when to call back.
		default:
			ch.NextCallAt = next(ch.Attempts)
		}
	case OutcomeAbandoned:
		// The client picked up and nobody was there to talk: call again soon, whatever the count.
		ch.NextCallAt = next(1)
	}
	return ch
}

// Rules are an order's dialing rules.
type Rules struct {
	// Week is Monday first.
	Week     Week
	Holidays map[Date]bool
	// IgnoreLeadTimezone reads the schedule in UTC whatever the lead's offset.
	IgnoreLeadTimezone bool
	// Intervals are the waits after the 1st, 2nd, … call; empty when the order names no group.
	Intervals            []time.Duration
	ResetAttemptsEnabled bool
	// DropLockout is how long an abandoned call keeps its number out of the queue (0: not at all).
	DropLockout time.Duration
}

// Window is a day's calling hours in minutes from midnight, from Start (inclusive) to End
// (exclusive); an empty window is a day off.
type Window struct{ Start, End int }

// Off reports a day without calls.
func (w Window) Off() bool { return w.End <= w.Start }

// Week holds the windows of the days Monday to Sunday.
type Week [7]Window

// day is the window of weekday d.
func (w Week) day(d time.Weekday) Window { return w[(int(d)+6)%7] }

// Date is a calendar day.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf is the day of t in t's own zone.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// NextCall is when to call after a call that ended at ended and was attempt number attempt
// (from 1): the attempt's interval later, moved into the next calling window of the lead's zone.
// nil when the order names no interval for that attempt or has no calling day at all.
func (r Rules) NextCall(ended time.Time, attempt int, utcOffset *int) *time.Time {
	if attempt < 1 || attempt > len(r.Intervals) {
		return nil
	}
	t, ok := r.NextWorkingTime(ended.Add(r.Intervals[attempt-1]), r.Zone(utcOffset))
	if !ok {
		return nil
	}
	t = t.UTC().Truncate(time.Second)
	return &t
}

// Zone is where the schedule and the holidays are read: the lead's fixed offset (no daylight
// saving: the lead keeps one offset), or UTC when the order ignores the lead's zone or the offset
// is unknown.
func (r Rules) Zone(utcOffset *int) *time.Location {
	if r.IgnoreLeadTimezone || utcOffset == nil {
		return time.UTC
	}
	return time.FixedZone(fmt.Sprintf("UTC%+d", *utcOffset), *utcOffset*3600)
}

// NextWorkingTime is the first instant from t on that lies in a calling window of loc's days,
// skipping days off and holidays; ok is false when the week has no calling day.
func (r Rules) NextWorkingTime(t time.Time, loc *time.Location) (time.Time, bool) {
	local := t.In(loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	// Every 7 days hold a calling day of the week unless it is a holiday, and there are
	// len(Holidays) of those: the search ends within 7*(len+1) days.
	for range 7 * (len(r.Holidays) + 1) {
		w := r.Week.day(day.Weekday())
		if !w.Off() && !r.Holidays[DateOf(day)] {
			// loc is a fixed offset, so a day is always 24 hours long.
			start := day.Add(time.Duration(w.Start) * time.Minute)
			end := day.Add(time.Duration(w.End) * time.Minute)
			switch {
			case local.Before(start):
				return start, true
			case local.Before(end):
				return local, true
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}, false
}

// HolidayLayout is how the order service writes holiday dates.
const HolidayLayout = "02.01.2006"

// RulesOf reads the dialing rules of an order as the order service returns it. An error means the
// answer breaks the order service's own rules.
func RulesOf(o orders.Order) (Rules, error) {
	r := Rules{IgnoreLeadTimezone: o.IgnoreLeadTimezone, Holidays: make(map[Date]bool, len(o.CallHolidayOverrides)),
		DropLockout: time.Duration(max(o.DropLockoutHours, 0)) * time.Hour}
	var errs []error
	if len(o.CallSchedule) > len(r.Week) {
		errs = append(errs, fmt.Errorf("callSchedule: %d days", len(o.CallSchedule)))
	}
	for i, day := range o.CallSchedule[:min(len(o.CallSchedule), len(r.Week))] {
		w, err := windowOf(day)
		if err != nil {
			errs = append(errs, fmt.Errorf("callSchedule[%d]: %w", i, err))
		}
		r.Week[i] = w
	}
	for i, s := range o.CallHolidayOverrides {
		d, err := time.Parse(HolidayLayout, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("callHolidayOverrides[%d]: %q is not dd.mm.yyyy", i, s))
			continue
		}
		r.Holidays[DateOf(d)] = true
	}
	if g := o.CallAttemptGroup; g != nil {
		r.ResetAttemptsEnabled = g.ResetAttemptsEnabled
		for i, m := range g.Intervals {
			if m < 1 {
				errs = append(errs, fmt.Errorf("callAttemptGroup.intervals[%d]: %d minutes", i, m))
				continue
			}
			r.Intervals = append(r.Intervals, time.Duration(m)*time.Minute)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Rules{}, fmt.Errorf("order %d: %w", o.ID, err)
	}
	return r, nil
}

// windowOf reads ["HH:MM","HH:MM"] (24:00 allowed as the end) or [] for a day off.
func windowOf(day []string) (Window, error) {
	switch len(day) {
	case 0:
		return Window{}, nil
	case 2:
	default:
		return Window{}, fmt.Errorf("%d times, want 2 or none", len(day))
	}
	start, ok1 := clock(day[0])
	end, ok2 := clock(day[1])
	if !ok1 || !ok2 || start >= end || start >= 24*60 {
		return Window{}, fmt.Errorf("%q is not a window of HH:MM times", day)
	}
	return Window{Start: start, End: end}, nil
}

// clock reads HH:MM as minutes from midnight, up to 24:00.
func clock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' || !digits(s[:2]) || !digits(s[3:]) {
		return 0, false
	}
	h, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[3:])
	if m > 59 || h*60+m > 24*60 {
		return 0, false
	}
	return h*60 + m, true
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
