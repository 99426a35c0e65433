package leadv1

import (
	"bytes"
	"encoding/json"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/phone"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/lead"
)

// fuzzRules checks with the phone fast path, as the services do.
var fuzzRules = lead.NewService(nil, nil, nil, lead.Rules{AdSystems: lead.DefaultAdSystems, Phones: phone.New()})

// FuzzLeadV1Body: any v1 body decodes and checks, for a create (the worker's Decode) and an
// update, without a panic; a refusal is a 400 naming fields as v1 spells them; an accepted create
// makes a lead whose v2 view, sent back as a v2 create body, makes the same lead.
func FuzzLeadV1Body(f *testing.F) {
	for _, seed := range []string{
		`{"lead_type":"selection","client_phone":"79161234567","order_id":3,"order_code":"c3","messengerId":"88","socialNetworkId":"123","socialLogin":"sl","client_name":"N","quiz_log":{"q":[1, 2]},"campaign_id":"camp","external_id":"ext","priority":4,"utc_offset":5,"status":2,"call_timestamp":1798794000,"messengerUserName":"mu","messengerPhone":"+79160000000"}`,
		`{"lead_type":"straight","client_phone":"+7 (916) 123-45-67","order_id":1,"order_code":"o","messengerId":null,"socialNetworkId":7,"socialLogin":null,"call_timestamp":"2027-01-15T10:00:00+03:00"}`,
		`{"client_phone":"12","utc_offset":40,"status":0}`, `{"order_id":"7"}`, `{"client_name":"a\u0000b"}`,
		`{"priority":2147483648}`, `{"status":9223372036854775808}`, `{"socialNetworkId":"12a","messengerId":-1}`,
		`{"call_timestamp":"yesterday","quiz_log":[1,2}`, `{"client_phone":null,"client_name":null}`, `{"lead_type":"\ud800"}`,
		`{"leadType":"straight","phone":"79161234567"}`, `[]`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in Input
		if err := web.Unmarshal(body, &in); err != nil {
			refusedV1(t, body, err)
			return
		}
		if _, err := Check(fuzzRules, in, lead.ForUpdate); err != nil {
			refusedV1(t, body, err)
		}
		ch, err := Decode(fuzzRules, body)
		if err != nil {
			refusedV1(t, body, err)
			return
		}
		meta := lead.Meta{CreateMethod: lead.MethodAPIv1Async}
		view := lead.ViewOf(lead.New(ch, meta))
		want, err := json.Marshal(view)
		if err != nil {
			t.Fatalf("%q accepted, its view does not encode: %v", body, err)
		}
		v2 := createBody(t, view)
		var again lead.Input
		if err := web.Unmarshal(v2, &again); err != nil {
			t.Fatalf("%q accepted, its view %s does not decode as a v2 body: %v", body, v2, err)
		}
		ch2, err := fuzzRules.CheckBody(again, lead.ForCreate)
		if err != nil {
			t.Fatalf("%q accepted, its view %s is refused as a v2 create: %v", body, v2, err)
		}
		got, _ := json.Marshal(lead.ViewOf(lead.New(ch2, meta)))
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: the lead\n%s\nsent back as v2 makes\n%s", body, want, got)
		}
	})
}

// refusedV1 fails t unless err is a 400 naming each broken field, by its v1 name where v1 has one.
func refusedV1(t *testing.T, body []byte, err error) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Invalid || len(e.Fields) == 0 {
		t.Fatalf("refusal of %q is not a 400 with field errors: %v", body, err)
	}
	for field, rule := range e.Fields {
		if field == "" || rule == "" {
			t.Fatalf("%q: a field error without a name or rule: %v", body, e.Fields)
		}
		if v1, renamed := Names[field]; renamed && !sentMember(body, field) {
			t.Fatalf("%q: field error names the v2 field %s, not %s: %v", body, field, v1, e.Fields)
		}
	}
}

// sentMember reports whether body names a member name, read as far as it is JSON: a v1 body may
// carry a member with a v2 name, ignored but still refused for what its value holds (a U+0000,
// invalid UTF-8), and then named as sent.
func sentMember(body []byte, name string) bool {
	d := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && s == name {
			return true
		}
	}
}

// createBody is view as a v2 create body: a lead made without a status shows statusId 0, which
// the catalog's default fills when it is stored, so it is left out.
func createBody(t *testing.T, view lead.View) []byte {
	t.Helper()
	b, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	if view.StatusID != 0 {
		return b
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "statusId")
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
