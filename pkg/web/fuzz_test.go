package web

import (
	"encoding/json"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
)

// fuzzBody has the shapes request bodies use: tri-state fields, sized integers, nested objects,
// arrays and maps.
type fuzzBody struct {
	Title  optional.Value[string]         `json:"title"`
	Small  optional.Value[int32]          `json:"small"`
	Big    optional.Value[int64]          `json:"big"`
	IDs    optional.Value[[]int64]        `json:"ids"`
	Names  optional.Value[map[string]any] `json:"names"`
	Nested struct {
		Flag optional.Value[bool] `json:"flag"`
	} `json:"nested"`
	Raw map[string]json.RawMessage `json:"raw"`
}

// FuzzUnmarshal: whatever the body, decoding never panics; a refusal is a 400 naming fields; an
// accepted body holds no U+0000 and, encoded again, decodes to the same value.
func FuzzUnmarshal(f *testing.F) {
	for _, seed := range []string{
		`{"title":"a","small":1,"big":2,"ids":[1,2],"names":{"ru":"x"},"nested":{"flag":true},"raw":{"1":"v"}}`,
		`{"title":"a\u0000b"}`, `{"TITLE":"x"}`, `{"title":"a","title":"b"}`, `{"small":2147483648}`,
		`{"big":9223372036854775808}`, `{"title":"\ud800"}`, "{\"title\":\"\xff\"}", `{"ids":[1,"2"]}`, `[]`, ``, `{`,
		`{"names":{"\u0000":1}}`, `{"raw":{"k":"\u0000"}}`, `{"title":"\\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b fuzzBody
		err := Unmarshal(body, &b)
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.Invalid {
				t.Fatalf("refusal of %q is not a 400: %v", body, err)
			}
			return
		}
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("accepted %q, cannot encode it: %v", body, err)
		}
		var again fuzzBody
		if err := Unmarshal(out, &again); err != nil {
			t.Fatalf("accepted %q, refused its own encoding %s: %v", body, out, err)
		}
		back, _ := json.Marshal(again)
		if string(back) != string(out) {
			t.Fatalf("round trip changed %s into %s", out, back)
		}
	})
}

// FuzzParseQuery: a query string is parsed whole or refused with a 400, never partly.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{"limit=1&orderIds[]=2", "limit=1;x=1", "a=%zz", "", "&&&", "x=1&x=2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := ParseQuery(raw)
		if err != nil {
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.Invalid {
				t.Fatalf("refusal of %q is not a 400: %v", raw, err)
			}
			return
		}
		if q == nil {
			t.Fatalf("%q: no values and no error", raw)
		}
	})
}
