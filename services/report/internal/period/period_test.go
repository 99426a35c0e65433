package period

import (
	"net/url"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/services/report/internal/bucket"

	"github.com/stretchr/testify/assert"
)

func parse(raw string) (Period, apperr.FieldErrors) {
	q, _ := url.ParseQuery(raw)
	fe := apperr.FieldErrors{}
	return Parse(q, fe), fe
}

func TestPeriodRules(t *testing.T) {
	for _, c := range []struct{ query, field, rule string }{
		{"to=2026-11-02", "from", "is required"},
		{"from=2026-11-01", "to", "is required"},
		{"from=yesterday&to=2026-11-02", "from", timeRule},
		{"from=2026-11-02&to=2026-11-01", "to", "must be after from"},
		{"from=2026-11-01&to=2026-11-02&interval=week", "interval", intervalRule},
		{"from=2026-11-01&to=2026-11-02&tz=Mars/Olympus", "tz", tzRule},
		{"from=2026-11-01&to=2026-11-02&tz=Local", "tz", tzRule},
		{"from=2026-10-01&to=2026-11-02&interval=hour", "to", "must be at most 31 days after from at interval hour (31 days at hour, 366 at day and total)"},
		{"from=2025-01-01&to=2026-01-03&interval=day", "to", "must be at most 366 days after from at interval day (31 days at hour, 366 at day and total)"},
	} {
		_, fe := parse(c.query)
		assert.Equal(t, c.rule, fe[c.field], c.query)
	}
}

func TestThirtyOneDaysOfHoursAcrossADSTChangeAreAllowed(t *testing.T) {
	p, fe := parse("from=2026-10-10&to=2026-11-10&interval=hour&tz=Europe/Berlin")
	assert.Empty(t, fe)
	assert.Equal(t, 31*24+1, p.Len(), "one hour more: clocks went back")
}

func TestDatesAreMidnightInTheZoneAndTimesAreRoundedOutToWholeIntervals(t *testing.T) {
	p, fe := parse("from=2026-11-01&to=2026-11-01T10:20:00Z&interval=day&tz=Asia/Tokyo")
	assert.Empty(t, fe)
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, tokyo).UTC(), p.From().UTC())
	assert.Equal(t, time.Date(2026, 11, 2, 0, 0, 0, 0, tokyo).UTC(), p.To().UTC())
	assert.Equal(t, 1, p.Len())
	p, _ = parse("from=2026-11-01T10:20:00Z&to=2026-11-01T10:31:00Z&interval=total")
	assert.Equal(t, bucket.Total, p.Unit)
	assert.Equal(t, "10:15 10:45", p.From().Format("15:04")+" "+p.To().Format("15:04"))
}
