package bucket

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func TestHoursOfADayWhenClocksGoBackAreTwentyFive(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	from := time.Date(2026, 10, 25, 0, 0, 0, 0, berlin)
	to := time.Date(2026, 10, 26, 0, 0, 0, 0, berlin)
	starts := Hour.Intervals(from, to, berlin)
	assert.Len(t, starts, 25+1, "25 hours and the end")
	assert.Equal(t, "02:00:00 +0200", starts[2].In(berlin).Format("15:04:05 -0700"))
	assert.Equal(t, "02:00:00 +0100", starts[3].In(berlin).Format("15:04:05 -0700"), "the repeated hour is an interval of its own")
	assert.Len(t, Day.Intervals(from, to, berlin), 2)
}

func TestHoursOfADayWhenClocksGoForwardAreTwentyThree(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	from := time.Date(2026, 3, 29, 0, 0, 0, 0, berlin)
	to := time.Date(2026, 3, 30, 0, 0, 0, 0, berlin)
	assert.Len(t, Hour.Intervals(from, to, berlin), 23+1)
}

func TestHoursOfAHalfHourZoneStartAtHalfPastInUTC(t *testing.T) {
	kolkata := zone(t, "Asia/Kolkata")
	at := time.Date(2026, 11, 26, 10, 20, 0, 0, time.UTC) // 15:50 in Kolkata
	assert.Equal(t, time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC), Hour.Floor(at, kolkata))
	assert.Equal(t, time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC), Hour.Ceil(at, kolkata))
	assert.Equal(t, time.Date(2026, 11, 25, 18, 30, 0, 0, time.UTC), Day.Floor(at, kolkata))
	assert.Equal(t, time.Date(2026, 11, 26, 18, 30, 0, 0, time.UTC), Day.Ceil(at, kolkata))
}

func TestCeilOfABoundaryIsItself(t *testing.T) {
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, at, Day.Ceil(at, time.UTC))
	assert.Equal(t, at, Hour.Ceil(at, time.UTC))
	assert.Equal(t, at, Total.Ceil(at, time.UTC))
	assert.Equal(t, at.Add(Size), Total.Ceil(at.Add(time.Second), time.UTC))
}

func TestOnHoursTellsTheHourlyRollUpApart(t *testing.T) {
	kolkata, berlin := zone(t, "Asia/Kolkata"), zone(t, "Europe/Berlin")
	from, to := time.Date(2026, 10, 24, 0, 0, 0, 0, berlin), time.Date(2026, 10, 27, 0, 0, 0, 0, berlin)
	assert.True(t, OnHours(Hour.Intervals(from, to, berlin)), "Berlin's hours, the day clocks go back included")
	assert.True(t, OnHours(Day.Intervals(from, to, berlin)))
	from, to = time.Date(2026, 10, 24, 0, 0, 0, 0, kolkata), time.Date(2026, 10, 25, 0, 0, 0, 0, kolkata)
	assert.False(t, OnHours(Hour.Intervals(from, to, kolkata)), "Kolkata's hours start at half past")
	assert.Equal(t, time.Date(2026, 10, 24, 6, 0, 0, 0, time.UTC), HourOf(time.Date(2026, 10, 24, 11, 59, 0, 0, kolkata)))
}
