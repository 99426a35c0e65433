package web_test

import (
	"testing"
	"time"

	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
)

func TestTimesAreWrittenInUTCWholeSeconds(t *testing.T) {
	at := time.Date(2026, 11, 21, 13, 0, 0, 999_000_000, time.FixedZone("MSK", 3*3600))
	assert.Equal(t, "2026-11-21T10:00:00+00:00", web.Time(at))
	assert.Equal(t, "2026-11-21T10:00:00+00:00", *web.TimeOrNull(&at))
	assert.Nil(t, web.TimeOrNull(nil))
}
