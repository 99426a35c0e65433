package listquery

import (
	"math"
	"net/url"
	"testing"

	"ccplatform/pkg/apperr"
)

// FuzzListQuery: offsets, limits, ids and periods from any query string are read within their
// bounds or named in field errors, never passed on out of range.
func FuzzListQuery(f *testing.F) {
	for _, seed := range []string{
		"offset=0&limit=50&orderIds[]=1&statusIds[]=2&createdAt[0]=2026-01-01&createdAt[1]=2026-02-01",
		"statusIds[]=2147483648", "orderIds[]=9223372036854775808", "limit=101", "offset=-1",
		"orderIds[0]=3&orderIds[1]=1", "createdAt[0]=yesterday", "orderIds=1,2,,3",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // refused whole by web.ParseQuery before a list reads it
		}
		fe := apperr.FieldErrors{}
		p := ParsePage(q, fe)
		ids := IDs(q, "orderIds", fe)
		small := IntIDs(q, "statusIds", fe)
		ParsePeriod(q, "createdAt", fe)
		if p.Offset < 0 || p.Limit < 1 || p.Limit > MaxLimit {
			t.Fatalf("%q: page %+v out of bounds", raw, p)
		}
		for _, id := range ids {
			if id <= 0 {
				t.Fatalf("%q: id %d", raw, id)
			}
		}
		for _, id := range small {
			if id <= 0 || id > math.MaxInt32 {
				t.Fatalf("%q: integer id %d", raw, id)
			}
		}
	})
}
