package order

import (
	"strings"
	"testing"

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

func TestDialable(t *testing.T) {
	for _, ok := range []string{"101", "12", "123456", "+74951234567", "74951234567", "+79161234567", "+442079460958"} {
		assert.True(t, Dialable(ok), ok)
	}
	// Issue 18: "not-a-phone" was stored as a transfer number.
	for _, bad := range []string{"not-a-phone", "", "1", "1234567", "+10000000000", "+7 495 123-45-67", "8(495)1234567",
		"+0123456789", "+7495123456789012", "１０１", "101a", "+"} {
		assert.False(t, Dialable(bad), bad)
	}
}
