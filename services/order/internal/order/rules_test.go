package order

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCodeFromTitle(t *testing.T) {
	cases := map[string]string{
		"Заказ 1":                "zakaz-1",
		"Подъезд и дверь":        "podezd-i-dver",
		"Hello World":            "hello-world",
		"snake_case Title":       "snake_case-title",
		"!!!":                    FallbackCode,
		"":                       FallbackCode,
		"  Щука   жёлтая  ":      "shchuka-zhioltaia",
		strings.Repeat("a", 200): strings.Repeat("a", 90),
	}
	for title, want := range cases {
		got := CodeFromTitle(title)
		assert.Equal(t, want, got, "title %q", title)
		assert.True(t, ValidCode(got), "generated code %q must be valid", got)
	}
}

func TestFirstFreeCode(t *testing.T) {
	assert.Equal(t, "zakaz-1", FirstFreeCode("zakaz-1", nil))
	assert.Equal(t, "zakaz-1", FirstFreeCode("zakaz-1", []string{"zakaz-1-2"}))
	assert.Equal(t, "zakaz-1-2", FirstFreeCode("zakaz-1", []string{"zakaz-1"}))
	assert.Equal(t, "zakaz-1-4", FirstFreeCode("zakaz-1", []string{"zakaz-1", "zakaz-1-2", "zakaz-1-3", "zakaz-1-x"}))
	assert.Equal(t, "a-3", FirstFreeCode("a", []string{"a", "a-2", "a-4"}))
}

func TestValidCode(t *testing.T) {
	for _, ok := range []string{"a", "zakaz-1", "a_b-9", strings.Repeat("x", MaxCodeLen)} {
		assert.True(t, ValidCode(ok), ok)
	}
	for _, bad := range []string{"", "Zakaz", "a b", "заказ", "a.b", "a/b", strings.Repeat("x", MaxCodeLen+1)} {
		assert.False(t, ValidCode(bad), bad)
	}
}

func TestParseSchedule(t *testing.T) {
	t.Run("valid, padded to 7", func(t *testing.T) {
		s, problems := ParseSchedule("callSchedule", [][]string{{"09:00", "18:00"}, {}, {"00:00", "24:00"}})
		require.Nil(t, problems)
		assert.Equal(t, Schedule{{"09:00", "18:00"}, {}, {"00:00", "24:00"}, {}, {}, {}, {}}, s)
	})
	t.Run("empty", func(t *testing.T) {
		s, problems := ParseSchedule("callSchedule", [][]string{})
		require.Nil(t, problems)
		assert.Len(t, s, 7)
	})
	t.Run("more than 7 days", func(t *testing.T) {
		_, problems := ParseSchedule("callSchedule", make([][]string, 8))
		assert.Contains(t, problems, "callSchedule")
	})
	t.Run("each broken day named", func(t *testing.T) {
		_, problems := ParseSchedule("callSchedule", [][]string{
			{"09:00"},          // one time
			{"18:00", "09:00"}, // end before start
			{"9:00", "18:00"},  // not HH:MM
			{"10:00", "10:00"}, // empty day
			{"09:00", "18:00"}, // fine
			{"24:00", "24:00"}, // 24:00 only as an end
			{"09:00", "18:60"}, // minutes out of range
		})
		assert.Len(t, problems, 6)
		for _, i := range []string{"0", "1", "2", "3", "5", "6"} {
			assert.Contains(t, problems, "callSchedule["+i+"]")
		}
	})
}

func TestDateParser(t *testing.T) {
	p := NewDateParser()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	ok := map[string]time.Time{
		"2027-12-31":                day(2027, 12, 31),
		"31.12.2027":                day(2027, 12, 31),
		"1.2.2027":                  day(2027, 2, 1),
		"2027-12-31T23:30:00+03:00": day(2027, 12, 31),
		"03/04/2027":                day(2027, 4, 3), // day first
		"2027/12/31":                day(2027, 12, 31),
		"31 декабря 2027":           day(2027, 12, 31),
		"January 5, 2027":           day(2027, 1, 5),
		" 5 Jan 2027 ":              day(2027, 1, 5),
		"20271231":                  day(2027, 12, 31),
		"31.12.2027 10:00":          day(2027, 12, 31),
	}
	for in, want := range ok {
		got, parsed := p.Parse(in)
		if assert.True(t, parsed, in) {
			assert.Equal(t, want, got, in)
		}
	}
	// Not dates: numbers that read as Unix times, impossible times, relative words (which would make
	// today or yesterday a holiday), dates missing a part.
	for _, bad := range []string{"", "garbage", "32.01.2027", "29.02.2027", "March", strings.Repeat("1", 100),
		"1e10", "1700000000", "2026-01-01T25:61:61Z", "2027-12-31 25:00", "yesterday", "today", "tomorrow", "now",
		"вчера", "завтра", "in 2 days", "2 days ago", "Dec 2027", "31.12"} {
		_, parsed := p.Parse(bad)
		assert.False(t, parsed, bad)
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
		_, problems := p.ParseHolidays("callHolidayOverrides", []string{"2027-01-07", "soon", "01.01.2027", "32.13.2027"})
		assert.Len(t, problems, 2)
		assert.Contains(t, problems, "callHolidayOverrides[1]")
		assert.Contains(t, problems, "callHolidayOverrides[3]")
	})
	t.Run("too many", func(t *testing.T) {
		_, problems := p.ParseHolidays("callHolidayOverrides", make([]string, MaxHolidays+1))
		assert.Contains(t, problems, "callHolidayOverrides")
	})
}
