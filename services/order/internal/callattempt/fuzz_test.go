package callattempt

import (
	"encoding/json"
	"reflect"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"
)

// FuzzCallAttemptBody: any create body decodes and validates without a panic; a refusal is a 400
// naming fields; an accepted group stays within its bounds and, sent back as a body, validates to
// the same group.
func FuzzCallAttemptBody(f *testing.F) {
	for _, seed := range []string{
		`{"title":" Standard ","intervals":[5,30,1440],"isDefault":true,"resetAttemptsEnabled":false}`,
		`{"title":"t","intervals":[1]}`, `{}`, `{"title":"  ","intervals":[]}`, `{"title":"t","intervals":[5,0,-1,600000]}`,
		`{"title":null,"intervals":null,"isDefault":null}`, `{"title":"a\u0000b","intervals":[1]}`,
		`{"title":"t","intervals":[9223372036854775808]}`, `{"title":"t","intervals":[1.5]}`, `{"title":"t","intervals":"1"}`,
		`{"title":"\ud800","intervals":[1]}`, `{"title":"t","title":"u","intervals":[1]}`, `{"isDefault":"true"}`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req CreateRequest
		if err := web.Unmarshal(body, &req); err != nil {
			if apperr.KindOf(err) != apperr.Invalid {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		g, err := req.Validate()
		if err != nil {
			e, ok := apperr.As(err)
			if !ok || e.Kind != apperr.Invalid || len(e.Fields) == 0 {
				t.Fatalf("refusal of %q is not a 400 with field errors: %v", body, err)
			}
			for field, rule := range e.Fields {
				if field == "" || rule == "" {
					t.Fatalf("%q: a field error without a name or rule: %v", body, e.Fields)
				}
			}
			return
		}
		if g.Title == "" || len(g.Intervals) == 0 || len(g.Intervals) > maxIntervals {
			t.Fatalf("%q accepted as %+v", body, g)
		}
		for _, m := range g.Intervals {
			if m < 1 || m > maxIntervalMinutes {
				t.Fatalf("%q accepted with an interval of %d minutes", body, m)
			}
		}
		out, err := json.Marshal(map[string]any{"title": g.Title, "intervals": g.Intervals,
			"isDefault": g.IsDefault, "resetAttemptsEnabled": g.ResetAttemptsEnabled})
		if err != nil {
			t.Fatalf("%q accepted, cannot encode it: %v", body, err)
		}
		var again CreateRequest
		if err := web.Unmarshal(out, &again); err != nil {
			t.Fatalf("%q accepted, its encoding %s does not decode: %v", body, out, err)
		}
		back, err := again.Validate()
		if err != nil {
			t.Fatalf("%q accepted, its encoding %s is refused: %v", body, out, err)
		}
		if !reflect.DeepEqual(back, g) {
			t.Fatalf("%q: round trip changed %+v into %+v", body, g, back)
		}
	})
}
