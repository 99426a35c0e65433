package order

import (
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"
)

// FuzzOrderBody: any body decodes and checks without a panic; what is refused is a 400 naming
// fields. Seeds are the bodies the bad-input sweep sends.
func FuzzOrderBody(f *testing.F) {
	for _, seed := range []string{
		`{"serviceTitle":"s","title":"t","status":"success","sipEndpointIds":[1]}`,
		`{"title":"a\u0000b"}`, `{"callHolidayOverrides":["1e10","2026-01-01T25:61:61Z","yesterday"]}`,
		`{"sipEndpointIds":[9223372036854775807]}`, `{"transferNumbers":[{"number":"not-a-phone"}]}`,
		`{"callSchedule":[["09:00","25:61"]]}`, `{"customValues":{"1":",,"}}`, `{"clientUserId":0}`,
	} {
		f.Add([]byte(seed))
	}
	dates := NewDateParser()
	f.Fuzz(func(t *testing.T, body []byte) {
		var in Input
		if err := web.Unmarshal(body, &in); err != nil {
			if apperr.KindOf(err) != apperr.Invalid {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		for _, mode := range []Mode{ForCreate, ForUpdate} {
			fe := apperr.FieldErrors{}
			in.Check(mode, dates, fe)
			for field, rule := range fe {
				if field == "" || rule == "" {
					t.Fatalf("%q: a field error without a name or rule: %v", body, fe)
				}
			}
		}
	})
}

// FuzzHolidayDate: a date is read or refused, never a panic; what is read is a whole calendar
// date that reads back the same from its dd.mm.yyyy form.
func FuzzHolidayDate(f *testing.F) {
	for _, seed := range []string{"31.12.2027", "2027-12-31", "1e10", "yesterday", "2026-01-01T25:61:61Z", "31 декабря 2027", "20271231"} {
		f.Add(seed)
	}
	p := NewDateParser()
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := p.Parse(s)
		if !ok {
			return
		}
		if d.Hour() != 0 || d.Minute() != 0 || d.Location() != time.UTC {
			t.Fatalf("%q read as %v, not a date", s, d)
		}
		back, ok := p.Parse(d.Format(HolidayLayout))
		if !ok || !back.Equal(d) {
			t.Fatalf("%q read as %v, whose %s reads back as %v", s, d, d.Format(HolidayLayout), back)
		}
	})
}
