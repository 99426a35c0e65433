package dialer

import (
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/orders"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLeaseInputRules(t *testing.T) {
	fe := apperr.FieldErrors{}
	r := LeaseInput{OrderID: optional.Of[int64](3), Limit: optional.Of[int64](50), DialerID: optional.Of(" d-1 ")}.Check(fe)
	require.Empty(t, fe)
	assert.Equal(t, LeaseRequest{OrderID: 3, Limit: 50, Lease: 120 * time.Second, DialerID: "d-1"}, r)

	fe = apperr.FieldErrors{}
	LeaseInput{}.Check(fe)
	assert.Equal(t, apperr.FieldErrors{"orderId": "is required", "dialerId": "is required"}, fe, "no limit: a paced lease")

	fe = apperr.FieldErrors{}
	r = LeaseInput{OrderID: optional.Of[int64](3), DialerID: optional.Of("d")}.Check(fe)
	require.Empty(t, fe)
	assert.Equal(t, LeaseRequest{OrderID: 3, Paced: true, Lease: 120 * time.Second, DialerID: "d"}, r)

	fe = apperr.FieldErrors{}
	LeaseInput{OrderID: optional.Of[int64](3), Limit: optional.Null[int64](), DialerID: optional.Of("d")}.Check(fe)
	assert.Equal(t, apperr.FieldErrors{"limit": "must be an integer from 1 to 100, or left out for a paced lease"}, fe)

	fe = apperr.FieldErrors{}
	long := string(make([]byte, 65))
	LeaseInput{OrderID: optional.Of[int64](0), Limit: optional.Of[int64](101), LeaseSeconds: optional.Of[int64](9),
		DialerID: optional.Of("x" + long)}.Check(fe)
	assert.Equal(t, apperr.FieldErrors{
		"orderId":      "must be an integer > 0",
		"limit":        "must be an integer from 1 to 100",
		"leaseSeconds": "must be an integer from 10 to 3600",
		"dialerId":     "must be at most 64 characters",
	}, fe)

	fe = apperr.FieldErrors{}
	r = LeaseInput{OrderID: optional.Of[int64](1), Limit: optional.Of[int64](1), LeaseSeconds: optional.Of[int64](3600),
		DialerID: optional.Of("d")}.Check(fe)
	assert.Empty(t, fe)
	assert.Equal(t, time.Hour, r.Lease)
}

func TestReleaseAndExtendInputRules(t *testing.T) {
	id := "5b0e8f4c-2f3a-4c1e-9d62-3f0f1c8a9b7e"
	fe := apperr.FieldErrors{}
	r := ReleaseInput{LeaseID: optional.Of(id)}.Check(fe)
	assert.Empty(t, fe)
	assert.Nil(t, r.LeadIDs, "no leadIds: the whole lease")

	fe = apperr.FieldErrors{}
	r = ReleaseInput{LeaseID: optional.Of("nope"), LeadIDs: optional.Of([]int64{4, 0})}.Check(fe)
	assert.Equal(t, apperr.FieldErrors{"leaseId": "must be a leaseId a lease answered (a UUID)", "leadIds[1]": "must be an integer > 0"}, fe)

	fe = apperr.FieldErrors{}
	e := ExtendInput{LeaseID: optional.Of(id)}.Check(fe)
	assert.Empty(t, fe)
	assert.Equal(t, ExtendRequest{LeaseID: id, Lease: 120 * time.Second}, e)
	fe = apperr.FieldErrors{}
	ExtendInput{LeaseSeconds: optional.Of[int64](4000)}.Check(fe)
	assert.Equal(t, apperr.FieldErrors{"leaseId": "is required", "leaseSeconds": "must be an integer from 10 to 3600"}, fe)
}

// weekdays is an order calling Monday to Friday 09:00–18:00, not on Tuesday 24 November 2026.
func weekdays(t *testing.T, ignoreZones bool) callresult.Rules {
	t.Helper()
	day := []string{"09:00", "18:00"}
	r, err := callresult.RulesOf(orders.Order{ID: 1, CallSchedule: [][]string{day, day, day, day, day, {}, {}},
		CallHolidayOverrides: []string{"24.11.2026"}, IgnoreLeadTimezone: ignoreZones})
	require.NoError(t, err)
	return r
}

func TestCallableZonesReadTheWindowInEachLeadsZone(t *testing.T) {
	r := weekdays(t, false)
	// Monday 23 November 2026, 06:30 UTC: 09:00–18:00 holds at +3 (09:30) to +11 (17:30).
	z := CallableZones(r, time.Date(2026, 11, 23, 6, 30, 0, 0, time.UTC))
	assert.Equal(t, []int{3, 4, 5, 6, 7, 8, 9, 10, 11}, z.Offsets)
	assert.False(t, z.Unknown, "an unknown offset is read in UTC: 06:30 is outside")

	// Monday 21:30 UTC: still Monday 09:30 to 17:30 at -12 to -4.
	z = CallableZones(r, time.Date(2026, 11, 23, 21, 30, 0, 0, time.UTC))
	assert.Equal(t, []int{-12, -11, -10, -9, -8, -7, -6, -5, -4}, z.Offsets)
	// Tuesday 06:30 UTC: 09:30 to 17:30 at +3 to +11 is the holiday; Monday evening further west.
	z = CallableZones(r, time.Date(2026, 11, 24, 6, 30, 0, 0, time.UTC))
	assert.True(t, z.None())

	// Monday 12:00 UTC: inside the window at -3 (09:00, the start counts) to +5 (17:00); +6 is
	// 18:00, the end, which is outside.
	z = CallableZones(r, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	assert.Equal(t, []int{-3, -2, -1, 0, 1, 2, 3, 4, 5}, z.Offsets)
	assert.True(t, z.Unknown)

	// Saturday: no zone is on a working day but those already in Monday (none: +14 is Saturday 22:00).
	z = CallableZones(r, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	assert.True(t, z.None())
}

func TestCallableZonesOfAnOrderThatIgnoresLeadZones(t *testing.T) {
	r := weekdays(t, true)
	z := CallableZones(r, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	assert.True(t, z.Unknown)
	assert.Len(t, z.Offsets, 27, "every offset, read in UTC")
	assert.True(t, CallableZones(r, time.Date(2026, 11, 23, 6, 30, 0, 0, time.UTC)).None())
	assert.True(t, CallableZones(r, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)).None(), "the holiday")
}

func TestDayIsTheUTCDay(t *testing.T) {
	from, to := Day(time.Date(2026, 11, 23, 23, 30, 0, 0, time.FixedZone("+3", 3*3600)))
	assert.Equal(t, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), from)
	assert.Equal(t, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), to)
	limit := int64(2)
	assert.False(t, LimitReached(nil, 1000))
	assert.False(t, LimitReached(&limit, 1))
	assert.True(t, LimitReached(&limit, 2))
}

func TestQueueOrderAndOneLeadPerPhone(t *testing.T) {
	at := func(h int) *time.Time { t := time.Date(2026, 11, 23, h, 0, 0, 0, time.UTC); return &t }
	leads := []Leased{
		{ID: 1, Phone: "a", Priority: 0, PlanningCallAt: at(9)},
		{ID: 2, Phone: "b", Priority: 5, PlanningCallAt: at(10)},
		{ID: 3, Phone: "c", Priority: 5, PlanningCallAt: nil},
		{ID: 4, Phone: "a", Priority: 5, PlanningCallAt: at(8)},
		{ID: 5, Phone: "d", Priority: 0, PlanningCallAt: at(9)},
	}
	SortByQueue(leads)
	var ids []int64
	for _, l := range leads {
		ids = append(ids, l.ID)
	}
	assert.Equal(t, []int64{3, 4, 2, 1, 5}, ids, "priority first, unplanned before planned, then the time, then id")
	kept, extra := OnePerPhone(leads)
	assert.Len(t, kept, 4)
	assert.Equal(t, []int64{1}, extra, "lead 4 has phone a first")
}
