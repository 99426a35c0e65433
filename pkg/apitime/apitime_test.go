package apitime_test

import (
	"testing"
	"time"

	"ccplatform/pkg/apitime"

	"github.com/stretchr/testify/assert"
)

func TestTimesAreWrittenInUTCWholeSeconds(t *testing.T) {
	at := time.Date(2026, 11, 21, 13, 0, 0, 999_000_000, time.FixedZone("MSK", 3*3600))
	assert.Equal(t, "2026-11-21T10:00:00+00:00", apitime.String(at))
	assert.Equal(t, "2026-11-21T10:00:00+00:00", *apitime.StringOrNull(&at))
	assert.Nil(t, apitime.StringOrNull(nil))
}

func TestInRange(t *testing.T) {
	parse := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for s, want := range map[string]bool{
		"0001-01-01T00:00:00Z":                true,
		"2026-11-21T10:00:00+03:00":           true,
		"9999-12-31T23:59:59Z":                true,
		"9999-12-31T23:59:59.999999Z":         true,
		"0000-06-01T00:00:00Z":                false, // no year 0 in PostgreSQL
		"0001-01-01T00:30:00+01:00":           false, // 0000-12-31T23:30:00Z
		"9999-12-31T23:59:59-14:00":           false, // 10000-01-01T13:59:59Z
		"9999-12-31T23:59:59.9999995Z":        false, // PostgreSQL would round it into 10000
		"9999-12-31T23:59:59.999999999Z":      false,
		"2026-01-01T00:00:00.000000001+00:00": true,
	} {
		assert.Equal(t, want, apitime.InRange(parse(s)), s)
	}
}
