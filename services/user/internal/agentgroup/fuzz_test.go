package agentgroup

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"
)

// FuzzAgentGroupBody: any create or update body decodes and checks without a panic; a refusal is a
// 400 naming fields; an accepted body, applied to a group, shows a view that, sent back as a
// create body, is accepted and makes the same group.
func FuzzAgentGroupBody(f *testing.F) {
	for _, seed := range []string{
		`{"names":{"ru":" Продажи ","gb":"Sales"},"agentIds":[3,1,3]}`, `{"names":{"ru":"a","gb":"b"},"agentIds":[]}`,
		`{"names":{"ru":"a"}}`, `{"names":null,"agentIds":null}`, `{"names":{"ru":"a\u0000b","gb":"b"}}`,
		`{"agentIds":[0,-1,9223372036854775808]}`, `{"agentIds":[1,"2"]}`, `{"names":{"ru":"\u2028 ","gb":"\ud800"}}`,
		`{"names":"x","agentIds":{}}`, `{}`, `[]`, `{"NAMES":{"ru":"a","gb":"b"},"agentIds":[1],"agentIds":[2]}`,
	} {
		f.Add([]byte(seed))
	}
	at := time.Date(2027, 1, 15, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		var in Input
		if err := web.Unmarshal(body, &in); err != nil {
			if apperr.KindOf(err) != apperr.Invalid {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		for _, check := range []func() (Changes, error){in.CheckCreate, in.CheckUpdate} {
			ch, err := check()
			if err != nil {
				refused(t, body, err)
				continue
			}
			// A group as the store keeps it after the change: a create sets every field, an update
			// those it sends.
			g := Group{ID: 7, Names: Names{RU: "ru", GB: "gb"}, AgentIDs: []int64{1}, CreatedAt: at, UpdatedAt: at}
			if ch.NameRU != nil {
				g.Names.RU = *ch.NameRU
			}
			if ch.NameGB != nil {
				g.Names.GB = *ch.NameGB
			}
			if ch.AgentIDs != nil {
				g.AgentIDs = *ch.AgentIDs
			}
			view := ViewOf(g)
			out, err := json.Marshal(view)
			if err != nil {
				t.Fatalf("%q accepted, its view does not encode: %v", body, err)
			}
			var again Input
			if err := web.Unmarshal(out, &again); err != nil {
				t.Fatalf("%q accepted, its view %s does not decode: %v", body, out, err)
			}
			ch2, err := again.CheckCreate()
			if err != nil {
				t.Fatalf("%q accepted, its view %s is refused: %v", body, out, err)
			}
			g2 := Group{ID: g.ID, Names: Names{RU: *ch2.NameRU, GB: *ch2.NameGB}, AgentIDs: *ch2.AgentIDs, CreatedAt: at, UpdatedAt: at}
			if back := ViewOf(g2); !reflect.DeepEqual(back, view) {
				t.Fatalf("%q: round trip changed %+v into %+v", body, view, back)
			}
		}
	})
}

// refused fails t unless err is a 400 naming each broken field with its rule.
func refused(t *testing.T, body []byte, err error) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Invalid || len(e.Fields) == 0 {
		t.Fatalf("refusal of %q is not a 400 with field errors: %v", body, err)
	}
	for field, rule := range e.Fields {
		if field == "" || rule == "" {
			t.Fatalf("%q: a field error without a name or rule: %v", body, e.Fields)
		}
	}
}
