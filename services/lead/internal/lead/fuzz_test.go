package lead

import (
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"

	"github.com/nyaruka/phonenumbers"
)

// FuzzLeadBody: any v2 body decodes and checks without a panic; a refusal is a 400 naming fields.
func FuzzLeadBody(f *testing.F) {
	for _, seed := range []string{
		`{"leadType":"straight","phone":"79161234567","orderId":1,"orderCode":"o"}`,
		`{"name":"a\u0000b"}`, `{"priority":2147483648}`, `{"messengerPhone":"x"}`, `{"statusId":9223372036854775808}`,
		`{"customValues":{"1":"x"}}`, `{"socialNetworkId":"12a"}`, `{"planningCallDateTime":"yesterday"}`,
	} {
		f.Add([]byte(seed))
	}
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
			in.Check(mode, testRules, winter, fe)
		}
	})
}

// FuzzPhones: the fast path gives libphonenumber's own answer for every input.
func FuzzPhones(f *testing.F) {
	for _, seed := range []string{"79161234567", "+7 (916) 123-45-67", "+12025550143", "8 916 123 45 67", "x", "", "+", "0079161234567"} {
		f.Add(seed)
	}
	fast := NewPhones()
	var slow *Phones // nil reads every number with Parse and IsValidNumber
	f.Fuzz(func(t *testing.T, raw string) {
		a, okA := fast.Normalize(raw)
		b, okB := slow.Normalize(raw)
		if a != b || okA != okB {
			t.Fatalf("%q: fast path %q %v, library %q %v", raw, a, okA, b, okB)
		}
		if okA {
			if n, err := phonenumbers.Parse(a, ""); err != nil || !phonenumbers.IsValidNumber(n) {
				t.Fatalf("%q normalised to %q, which is not a valid number", raw, a)
			}
		}
	})
}
