package order

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDateParserReadsCommonForms(t *testing.T) {
	p := NewDateParser()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	ok := map[string]time.Time{
		"2027-12-31":                 day(2027, 12, 31),
		"2027-1-2":                   day(2027, 1, 2), // year first is always year-month-day
		"2027/12/31":                 day(2027, 12, 31),
		"2027.12.31":                 day(2027, 12, 31),
		"20271231":                   day(2027, 12, 31),
		"31.12.2027":                 day(2027, 12, 31),
		"1.2.2027":                   day(2027, 2, 1),
		"03/04/2027":                 day(2027, 4, 3), // day first
		"31-12-2027":                 day(2027, 12, 31),
		"31.12.2027 г.":              day(2027, 12, 31),
		"31.12.2027г":                day(2027, 12, 31),
		"2027-12-31T23:30:00+03:00":  day(2027, 12, 31), // the date as written, whatever the zone
		"2027-12-31T10:00:00.5Z":     day(2027, 12, 31),
		"2027-12-31t10:00":           day(2027, 12, 31),
		"31.12.2027 10:00":           day(2027, 12, 31),
		"31.12.2027 23:59:59 +14:00": day(2027, 12, 31),
		"2027-12-31 10:00 pm":        day(2027, 12, 31),
		"31 декабря 2027":            day(2027, 12, 31),
		"31 декабря 2027 года в 10:00":  day(2027, 12, 31),
		"31 ДЕКАБРЯ 2027 Г.":            day(2027, 12, 31),
		"5 сент. 2027":                  day(2027, 9, 5),
		"сб, 1 января 2028":             day(2028, 1, 1),
		"January 5, 2027":               day(2027, 1, 5),
		" 5 Jan 2027 ":                  day(2027, 1, 5),
		"Dec 31st 2027":                 day(2027, 12, 31),
		"the 5th of May 2027":           day(2027, 5, 5),
		"2027 Jan 5":                    day(2027, 1, 5),
		"Fri, 31 Dec 2027 10:00:00 GMT": day(2027, 12, 31),
		"December 31, 2027 11:30pm EST": day(2027, 12, 31),
		"1 Jan 2028 at 11pm":            day(2028, 1, 1),
		"31 Dec 2027 10:00 MSK":         day(2027, 12, 31),
		"31 Dec 2027 10:00 UTC+3":       day(2027, 12, 31),
	}
	for in, want := range ok {
		got, parsed := p.Parse(in)
		if assert.True(t, parsed, in) {
			assert.Equal(t, want, got, in)
		}
	}
}

// Issue 18: "1e10", "2026-01-01T25:61:61Z" and "yesterday" were stored as today's or yesterday's
// date. Each of these either names no date or names it ambiguously, and was refused or read as
// some other day before.
func TestDateParserRefusesWhatIsNotOneDate(t *testing.T) {
	p := NewDateParser()
	refused := map[string]string{
		"1e10":                       "a number",
		"1700000000":                 "a Unix time",
		"2026-01-01T25:61:61Z":       "an impossible time",
		"2027-12-31 25:00":           "an impossible hour",
		"31.12.2027 23:60":           "an impossible minute",
		"31.12.2027 23:59:60":        "an impossible second",
		"2027-12-31T24:00:00Z":       "24:00 is no time of a day",
		"2027-12-31 13:00 am":        "an am hour above 12",
		"2027-12-31 0:00 am":         "an am hour below 1",
		"31.12.2027 10:00 +99:00":    "an impossible offset",
		"31.12.2027 10:00 XYZ":       "an unknown zone",
		"31.12.2027 25h":             "read as 25 December before",
		"31.12.2027 10":              "read as 10 December before",
		"31.12.2027 25 часов":        "read as 25 December before",
		"31.12.2027 at 25":           "read as 25 December before",
		"Monday, 31 December 2027":   "31 December 2027 is a Friday",
		"31 Dec 2027 10:00 MON":      "31 December 2027 is a Friday",
		"yesterday":                  "relative",
		"today":                      "relative",
		"tomorrow":                   "relative",
		"now":                        "relative",
		"вчера":                      "relative",
		"завтра":                     "relative",
		"in 2 days":                  "relative",
		"2 days ago":                 "relative",
		"1 Jan 2027 -1 day":          "relative to a date",
		"next monday":                "relative",
		"":                           "empty",
		"garbage":                    "no date",
		"March":                      "no day, no year",
		"Dec 2027":                   "no day",
		"31.12":                      "no year",
		"1 января":                   "no year",
		"31.12.27":                   "a two-digit year",
		"1/1/27":                     "a two-digit year",
		"12/31/2027":                 "month first: dates in digits are day first",
		"31 12 2027":                 "numbers without separators",
		"31.12-2027":                 "two different separators",
		"32.01.2027":                 "no such day",
		"29.02.2027":                 "no such day",
		"30 февраля 2027":            "no such day",
		"0000-01-01":                 "year 0",
		"01.01.1899":                 "before 1900",
		"31 Dec Jan 2027":            "two months",
		"31 December 2027 BC":        "not our era",
		"31.12.２０２７":                 "digits other than 0-9",
		strings.Repeat("1", 100):     "too long",
		"31 декабря 2027 декабря":    "a month twice",
		"31 Dec 2027 and 1 Jan 2028": "two dates",
	}
	for in, why := range refused {
		d, parsed := p.Parse(in)
		assert.False(t, parsed, "%q (%s) read as %v", in, why, d)
	}
}

func TestParseHolidays(t *testing.T) {
	p := NewDateParser()
	t.Run("sorted without repeats", func(t *testing.T) {
		dates, problems := p.ParseHolidays("callHolidayOverrides", []string{"2027-01-07", "01.01.2027", "2027-01-01"})
		require.Nil(t, problems)
		require.Len(t, dates, 2)
		assert.Equal(t, "01.01.2027", dates[0].Format(HolidayLayout))
		assert.Equal(t, "07.01.2027", dates[1].Format(HolidayLayout))
	})
	t.Run("unreadable ones named by index", func(t *testing.T) {
		_, problems := p.ParseHolidays("callHolidayOverrides", []string{"2027-01-07", "soon", "01.01.2027", "32.13.2027", "1e10", "2026-01-01T25:61:61Z", "yesterday"})
		assert.Equal(t, map[string]string{
			"callHolidayOverrides[1]": ruleHoliday, "callHolidayOverrides[3]": ruleHoliday, "callHolidayOverrides[4]": ruleHoliday,
			"callHolidayOverrides[5]": ruleHoliday, "callHolidayOverrides[6]": ruleHoliday,
		}, problems)
	})
	t.Run("too many", func(t *testing.T) {
		_, problems := p.ParseHolidays("callHolidayOverrides", make([]string, MaxHolidays+1))
		assert.Contains(t, problems, "callHolidayOverrides")
	})
}
