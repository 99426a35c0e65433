package callresult

import (
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/services/lead/internal/orders"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 2026-11-16 is a Monday.
func at(day, hour, minute int) time.Time {
	return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC)
}

func ptr[T any](v T) *T { return &v }

// nineToSix calls Monday to Saturday from 09:00 to 18:00; Sunday is a day off.
var nineToSix = Week{{540, 1080}, {540, 1080}, {540, 1080}, {540, 1080}, {540, 1080}, {540, 1080}, {}}

func minutes(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Minute
	}
	return out
}

// rules calls nine to six, UTC leads, after 30 minutes, then 2 hours, then a day.
func rules() Rules {
	return Rules{Week: nineToSix, Intervals: minutes(30, 120, 1440)}
}

func newLead() Lead { return Lead{StatusCode: "new"} }

func TestEachCallCountsAsAnAttempt(t *testing.T) {
	l := newLead()
	for n := 1; n <= 5; n++ {
		ch := Apply(l, Call{Outcome: OutcomeNoAnswer, EndedAt: at(17, 10, n)}, rules())
		assert.Equal(t, n, ch.Attempts)
		l.Attempts, l.StatusCode, l.LastCallEndedAt = ch.Attempts, ch.StatusCode, ch.LastCallEndedAt
	}
}

func TestOutcomesSetTheStatus(t *testing.T) {
	ended := at(17, 10, 0) // Tuesday
	cases := map[string]struct {
		outcome, status string
		next            *time.Time
	}{
		"no answer":      {OutcomeNoAnswer, StatusNoAnswer, ptr(at(17, 10, 30))},
		"voicemail":      {OutcomeVoicemail, StatusNoAnswer, ptr(at(17, 10, 30))},
		"cancelled":      {OutcomeCancelled, StatusNoAnswer, ptr(at(17, 10, 30))},
		"rejected":       {OutcomeRejected, StatusNoAnswer, ptr(at(17, 10, 30))},
		"failed":         {OutcomeFailed, StatusNoAnswer, ptr(at(17, 10, 30))},
		"busy":           {OutcomeBusy, StatusBusy, ptr(at(17, 10, 30))},
		"invalid number": {OutcomeInvalidNumber, StatusWrongNumber, nil},
		"answered":       {OutcomeAnswered, "new", nil},
		"abandoned":      {OutcomeAbandoned, "new", ptr(at(17, 10, 30))},
		"unknown":        {"teleported", "new", ptr(at(20, 12, 0))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := newLead()
			l.PlanningCallAt = ptr(at(20, 12, 0))
			ch := Apply(l, Call{Outcome: tc.outcome, EndedAt: ended}, rules())
			assert.Equal(t, tc.status, ch.StatusCode)
			assert.Equal(t, tc.next, ch.NextCallAt)
			assert.Equal(t, 1, ch.Attempts)
			assert.Equal(t, &ended, ch.LastCallEndedAt)
			assert.False(t, ch.Late)
		})
	}
}

func TestFinalStatusIsKeptAndGetsNoNextCall(t *testing.T) {
	for _, outcome := range []string{OutcomeNoAnswer, OutcomeBusy, OutcomeAnswered, OutcomeAbandoned, OutcomeInvalidNumber} {
		l := Lead{StatusCode: "qualified", Final: true, Attempts: 3, PlanningCallAt: ptr(at(20, 12, 0))}
		ch := Apply(l, Call{Outcome: outcome, EndedAt: at(17, 10, 0)}, rules())
		assert.Equal(t, "qualified", ch.StatusCode, outcome)
		assert.Nil(t, ch.NextCallAt, outcome)
		assert.Equal(t, 4, ch.Attempts, "still counted: %s", outcome)
	}
}

func TestAnsweredCallback(t *testing.T) {
	ended := at(17, 10, 0)
	l := Lead{StatusCode: StatusCallback, Attempts: 1, PlanningCallAt: ptr(at(18, 15, 0))}
	ch := Apply(l, Call{Outcome: OutcomeAnswered, EndedAt: ended}, rules())
	assert.Equal(t, StatusCallback, ch.StatusCode)
	assert.Equal(t, ptr(at(18, 15, 0)), ch.NextCallAt, "a call-back time the agent set for after the call is kept")

	l.PlanningCallAt = ptr(at(17, 9, 0))
	ch = Apply(l, Call{Outcome: OutcomeAnswered, EndedAt: ended}, rules())
	assert.Equal(t, ptr(at(17, 12, 0)), ch.NextCallAt, "otherwise the second interval (2 h) after the call")
	assert.Equal(t, 2, ch.Attempts)

	l.PlanningCallAt = nil
	ch = Apply(l, Call{Outcome: OutcomeAnswered, EndedAt: ended}, rules())
	assert.Equal(t, ptr(at(17, 12, 0)), ch.NextCallAt)
}

func TestResetAttemptsForCallback(t *testing.T) {
	r := rules()
	r.ResetAttemptsEnabled = true
	ended := at(17, 10, 0)
	l := Lead{StatusCode: StatusCallback, Attempts: 7}
	ch := Apply(l, Call{Outcome: OutcomeNoAnswer, EndedAt: ended}, r)
	assert.Equal(t, 1, ch.Attempts, "the series starts over")
	assert.Equal(t, StatusNoAnswer, ch.StatusCode)
	assert.Equal(t, ptr(at(17, 10, 30)), ch.NextCallAt, "first interval")

	l.StatusCode = StatusNoAnswer
	ch = Apply(l, Call{Outcome: OutcomeNoAnswer, EndedAt: ended}, r)
	assert.Equal(t, 8, ch.Attempts, "only a callback lead is reset")
	assert.Nil(t, ch.NextCallAt, "beyond the intervals")

	r.ResetAttemptsEnabled = false
	l.StatusCode = StatusCallback
	ch = Apply(l, Call{Outcome: OutcomeNoAnswer, EndedAt: ended}, r)
	assert.Equal(t, 8, ch.Attempts, "no reset unless the group enables it")
}

func TestAbandonedCallsAgainAfterTheFirstInterval(t *testing.T) {
	l := Lead{StatusCode: StatusNoAnswer, Attempts: 9}
	ch := Apply(l, Call{Outcome: OutcomeAbandoned, EndedAt: at(17, 10, 0)}, rules())
	assert.Equal(t, StatusNoAnswer, ch.StatusCode)
	assert.Equal(t, 10, ch.Attempts)
	assert.Equal(t, ptr(at(17, 10, 30)), ch.NextCallAt, "even past the end of the intervals")
}

func TestEdgeOfTheIntervalList(t *testing.T) {
	ended := at(17, 10, 0)
	l := Lead{StatusCode: StatusNoAnswer, Attempts: 1}
	ch := Apply(l, Call{Outcome: OutcomeBusy, EndedAt: ended}, rules())
	assert.Equal(t, ptr(at(17, 12, 0)), ch.NextCallAt, "second call: second interval")
	l.Attempts = 2
	ch = Apply(l, Call{Outcome: OutcomeBusy, EndedAt: ended}, rules())
	assert.Equal(t, 3, ch.Attempts)
	assert.Equal(t, ptr(at(18, 10, 0)), ch.NextCallAt, "third call: the last interval")
	l.Attempts = 3
	ch = Apply(l, Call{Outcome: OutcomeBusy, EndedAt: ended}, rules())
	assert.Equal(t, StatusBusy, ch.StatusCode)
	assert.Nil(t, ch.NextCallAt, "fourth call: no interval left")

	r := rules()
	r.Intervals = nil
	ch = Apply(newLead(), Call{Outcome: OutcomeNoAnswer, EndedAt: ended}, r)
	assert.Nil(t, ch.NextCallAt, "an order without a call-attempt group plans no call")
}

func TestLateCallOnlyCounts(t *testing.T) {
	last := at(17, 12, 0)
	l := Lead{StatusCode: StatusBusy, Attempts: 2, PlanningCallAt: ptr(at(17, 14, 0)), LastCallEndedAt: &last}
	ch := Apply(l, Call{Outcome: OutcomeInvalidNumber, EndedAt: at(17, 11, 0)}, rules())
	assert.True(t, ch.Late)
	assert.Equal(t, Change{Attempts: 3, StatusCode: StatusBusy, NextCallAt: ptr(at(17, 14, 0)), LastCallEndedAt: &last, Late: true}, ch)

	ch = Apply(l, Call{Outcome: OutcomeNoAnswer, EndedAt: last}, rules())
	assert.False(t, ch.Late, "a call ending at the same second is applied")
}

func TestNextCallMovesIntoTheWindow(t *testing.T) {
	r := rules()
	cases := map[string]struct {
		ended time.Time
		next  *time.Time
	}{
		"inside the window":           {at(17, 10, 0), ptr(at(17, 10, 30))},
		"before the window opens":     {at(17, 6, 0), ptr(at(17, 9, 0))},
		"window ends before the time": {at(17, 17, 45), ptr(at(18, 9, 0))},
		"at the end is outside":       {at(17, 17, 30), ptr(at(18, 9, 0))},
		"one minute before the end":   {at(17, 17, 29), ptr(at(17, 17, 59))},
		"Saturday evening → Monday":   {at(21, 17, 50), ptr(at(23, 9, 0))},
		"Sunday day off → Monday":     {at(22, 11, 0), ptr(at(23, 9, 0))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.next, r.NextCall(tc.ended, 1, nil))
		})
	}
}

func TestHolidaysAreSkipped(t *testing.T) {
	r := rules()
	r.Holidays = map[Date]bool{{2026, 11, 18}: true, {2026, 11, 19}: true}
	assert.Equal(t, ptr(at(20, 9, 0)), r.NextCall(at(17, 17, 45), 1, nil), "Wednesday and Thursday are holidays")
	assert.Equal(t, ptr(at(20, 9, 0)), r.NextCall(at(18, 10, 0), 1, nil), "a call ending on a holiday")

	// Only Mondays are calling days, and the next ten Mondays are holidays.
	r.Week = Week{{540, 1080}}
	r.Holidays = map[Date]bool{}
	monday := at(23, 0, 0)
	for i := range 10 {
		r.Holidays[DateOf(monday.AddDate(0, 0, 7*i))] = true
	}
	want := monday.AddDate(0, 0, 70).Add(9 * time.Hour)
	assert.Equal(t, &want, r.NextCall(at(17, 10, 0), 1, nil))
}

func TestNoCallingDayMeansNoNextCall(t *testing.T) {
	r := rules()
	r.Week = Week{}
	assert.Nil(t, r.NextCall(at(17, 10, 0), 1, nil))
	ch := Apply(newLead(), Call{Outcome: OutcomeNoAnswer, EndedAt: at(17, 10, 0)}, r)
	assert.Equal(t, StatusNoAnswer, ch.StatusCode)
	assert.Nil(t, ch.NextCallAt)

	// Every calling day a holiday: the search ends too.
	r.Week = Week{{540, 1080}}
	r.Holidays = map[Date]bool{{2026, 11, 23}: true}
	assert.Equal(t, ptr(at(30, 9, 0)), r.NextCall(at(17, 10, 0), 1, nil))
}

func TestTheScheduleIsReadInTheLeadsZone(t *testing.T) {
	r := rules()
	// 10:00 UTC is 13:00 at +3: +30 min is inside the window.
	assert.Equal(t, ptr(at(17, 10, 30)), r.NextCall(at(17, 10, 0), 1, ptr(3)))
	// 14:45 UTC is 17:45 at +3: the window there has closed; 09:00 at +3 the next day is 06:00 UTC.
	assert.Equal(t, ptr(at(18, 6, 0)), r.NextCall(at(17, 14, 45), 1, ptr(3)))
	// 02:00 UTC is 21:00 the day before at -5; the next window opens 09:00 at -5 = 14:00 UTC.
	assert.Equal(t, ptr(at(17, 14, 0)), r.NextCall(at(17, 2, 0), 1, ptr(-5)))
	// Monday 01:00 UTC is Sunday 20:00 at -5, a day off then Monday 09:00 at -5 = 14:00 UTC.
	assert.Equal(t, ptr(at(23, 14, 0)), r.NextCall(at(23, 0, 30), 1, ptr(-5)))
	// Saturday 20:00 UTC is already Sunday 10:00 at +14: a day off, so Monday 09:00 at +14,
	// which is Sunday 19:00 UTC.
	assert.Equal(t, ptr(at(22, 19, 0)), r.NextCall(at(21, 19, 30), 1, ptr(14)))
	// -12: Tuesday 20:30 UTC is 08:30 there; the window opens at 09:00, 21:00 UTC.
	assert.Equal(t, ptr(at(17, 21, 0)), r.NextCall(at(17, 20, 0), 1, ptr(-12)))

	// Fixed offsets know no daylight saving: late March and late October read the same.
	spring := time.Date(2027, 3, 29, 6, 30, 0, 0, time.UTC) // Monday
	autumn := time.Date(2027, 11, 1, 6, 30, 0, 0, time.UTC) // Monday
	assert.Equal(t, ptr(time.Date(2027, 3, 29, 7, 0, 0, 0, time.UTC)), r.NextCall(spring, 1, ptr(2)))
	assert.Equal(t, ptr(time.Date(2027, 11, 1, 7, 0, 0, 0, time.UTC)), r.NextCall(autumn, 1, ptr(2)))
}

func TestHolidaysAreDatesOfTheLeadsZone(t *testing.T) {
	r := rules()
	r.Holidays = map[Date]bool{{2026, 11, 18}: true}
	// Tuesday 22:00 UTC is Wednesday 01:00 at +3, a holiday: Thursday 09:00 at +3 = 06:00 UTC.
	assert.Equal(t, ptr(at(19, 6, 0)), r.NextCall(at(17, 21, 30), 1, ptr(3)))
	// Read in UTC the same instant is Tuesday evening: Wednesday is skipped the same way.
	assert.Equal(t, ptr(at(19, 9, 0)), r.NextCall(at(17, 21, 30), 1, nil))
}

func TestIgnoreLeadTimezoneReadsTheScheduleInUTC(t *testing.T) {
	r := rules()
	r.IgnoreLeadTimezone = true
	assert.Equal(t, ptr(at(17, 15, 15)), r.NextCall(at(17, 14, 45), 1, ptr(3)))
	assert.Equal(t, time.UTC, r.Zone(ptr(3)))
	r.IgnoreLeadTimezone = false
	assert.Equal(t, "UTC+3", r.Zone(ptr(3)).String())
	assert.Equal(t, time.UTC, r.Zone(nil), "an unknown offset reads as UTC")
}

func TestWindowUntilMidnight(t *testing.T) {
	r := rules()
	r.Week = Week{{1200, 1440}, {1200, 1440}}
	assert.Equal(t, ptr(at(16, 23, 59)), r.NextCall(at(16, 23, 29), 1, nil))
	assert.Equal(t, ptr(at(17, 20, 0)), r.NextCall(at(16, 23, 30), 1, nil), "24:00 is the end, not a calling time")
}

func TestRulesOfAnOrder(t *testing.T) {
	r, err := RulesOf(orders.Order{
		ID:                   1,
		IgnoreLeadTimezone:   true,
		CallSchedule:         [][]string{{"09:00", "18:00"}, {}, {"10:30", "24:00"}, {}, {}, {}, {}},
		CallHolidayOverrides: []string{"01.01.2027", "07.01.2027"},
		CallAttemptGroup:     &orders.AttemptGroup{ID: 3, Intervals: []int64{5, 60}, ResetAttemptsEnabled: true},
	})
	require.NoError(t, err)
	assert.Equal(t, Rules{
		Week:                 Week{{540, 1080}, {}, {630, 1440}},
		Holidays:             map[Date]bool{{2027, 1, 1}: true, {2027, 1, 7}: true},
		IgnoreLeadTimezone:   true,
		Intervals:            minutes(5, 60),
		ResetAttemptsEnabled: true,
	}, r)

	r, err = RulesOf(orders.Order{ID: 2, CallSchedule: [][]string{{"08:00", "20:00"}}})
	require.NoError(t, err)
	assert.Equal(t, Week{{480, 1200}}, r.Week, "missing days are days off")
	assert.Empty(t, r.Intervals, "no group, no intervals")

	_, err = RulesOf(orders.Order{ID: 3, CallSchedule: [][]string{{"18:00", "09:00"}, {"9:00", "10:00"}, {"x"}},
		CallHolidayOverrides: []string{"2027-01-01"}, CallAttemptGroup: &orders.AttemptGroup{Intervals: []int64{0}}})
	require.Error(t, err)
	for _, part := range []string{"order 3", "callSchedule[0]", "callSchedule[1]", "callSchedule[2]", "callHolidayOverrides[0]", "intervals[0]"} {
		assert.Contains(t, err.Error(), part)
	}
}

func TestTrustedLastCall(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	assert.Nil(t, TrustedLastCall(nil, now))
	for _, at := range []time.Time{now.Add(-time.Hour), now, now.Add(MaxClockSkew)} {
		assert.Equal(t, &at, TrustedLastCall(&at, now), "%s", at)
	}
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	assert.Nil(t, TrustedLastCall(&far, now), "a call dated past the clock skew orders nothing")
	ahead := now.Add(MaxClockSkew + time.Second)
	assert.Nil(t, TrustedLastCall(&ahead, now))
}

func TestDecode(t *testing.T) {
	ev, err := Decode([]byte(`{"eventId":"0b7c6d2e-8a51-4f3e-b1d4-3c2a9e7f6d10","type":"call.finished",
		"occurredAt":"2026-11-21T10:01:47+00:00","callId":1234,"leadId":42,"orderId":7,"userId":5,"statusId":1,
		"statusCode":"answered","endedAt":"2026-11-21T13:01:47+03:00"}`), time.Now())
	require.NoError(t, err)
	assert.Equal(t, Finished{EventID: "0b7c6d2e-8a51-4f3e-b1d4-3c2a9e7f6d10", CallID: 1234, LeadID: 42, OrderID: 7,
		Outcome: "answered", EndedAt: time.Date(2026, 11, 21, 10, 1, 47, 0, time.UTC), UserID: 5}, ev)

	_, err = Decode([]byte(`not json`), time.Now())
	assert.ErrorContains(t, err, "undecodable event")
	_, err = Decode([]byte(`{"leadId":"42"}`), time.Now())
	assert.ErrorContains(t, err, "undecodable event")
	_, err = Decode([]byte(`{"eventId":"`+strings.Repeat("e", 129)+`","callId":0,"orderId":-1,"endedAt":"yesterday"}`), time.Now())
	require.Error(t, err)
	for _, part := range []string{"invalid event", "eventId", "callId", "leadId", "orderId", "statusCode", "endedAt"} {
		assert.Contains(t, err.Error(), part)
	}
	_, err = Decode([]byte(`{"eventId":"e","callId":1,"leadId":1,"orderId":1,"statusCode":"busy","endedAt":"9999-12-31T23:59:59-14:00"}`), time.Now())
	assert.ErrorContains(t, err, "invalid event: endedAt: "+apitime.RangeRule)
}
