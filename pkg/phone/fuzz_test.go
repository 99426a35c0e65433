package phone

import (
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// FuzzNormalize: the fast path gives libphonenumber's own answer for every input.
func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{"79161234567", "+7 (916) 123-45-67", "+12025550143", "8 916 123 45 67", "x", "", "+", "0079161234567"} {
		f.Add(seed)
	}
	fast := New()
	var slow *Normalizer // nil reads every number with Parse and IsValidNumber
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
