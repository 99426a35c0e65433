package asynccreate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/phone"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/leadv1"

	"go.uber.org/zap"
)

// fuzzWorker decodes jobs with the body rules alone (no store, orders or catalogs): decode needs
// nothing else.
var fuzzWorker = NewWorker(nil, lead.NewService(nil, nil, nil, lead.Rules{AdSystems: lead.DefaultAdSystems, Phones: phone.New()}), zap.NewNop(), 1)

// jobSeeds are lead.jobs job messages as lead-api writes them (Message.AppendJSON) and broken
// ones.
var jobSeeds = []string{
	`{"jobId":"0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e11","version":"v2","createMethod":"api_v2_async","body":{"leadType":"straight","phone":"79161234567","orderId":41,"orderCode":"order-41","customValues":{"3":"x"}},"callerUserId":9,"ip":"10.0.0.1","requestId":"r1","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
	`{"jobId":"0B6F3C3E-6F55-8D8C-9C55-2F0F1F7C8E12","version":"v1","createMethod":"api_v1_async","body":{"lead_type":"selection","client_phone":"+7 916 123 45 67","order_id":3,"order_code":"c3","messengerId":"88","socialNetworkId":"123","socialLogin":"sl","call_timestamp":1798794000},"callerUserId":null}`,
	`{"jobId":"0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e13","version":"v2","createMethod":"x","body":{"phone":"12"},"callerUserId":1}`,
	`{"jobId":"0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e14","version":"v1","body":{"order_id":"7"}}`,
	`{"jobId":"0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e15","version":"v2","body":null}`,
	`{"jobId":"0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e15","version":"v1"}`,
	`{"jobId":"0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e16","version":"v9","body":{}}`,
	`{"jobId":"x","version":"v2"}`, `{"jobId":"{0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e1}","version":"v2"}`,
	`{"JOBID":"0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e17","Version":"v2","body":"{}","callerUserId":1.5}`, `{not json`, `null`, `[]`, ``,
}

// FuzzJobMessage: whatever one lead.jobs message holds, the worker's decode never panics and sorts
// it one way: unreadable (dead-lettered at once), failed for good (its body is refused with a 400
// naming fields, by their v1 names for a v1 job), or a lead to store. A readable job, encoded again
// as lead-api encodes it, decodes to the same job with the same outcome.
func FuzzJobMessage(f *testing.F) {
	for _, seed := range jobSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		it, err := fuzzWorker.decode(raw)
		if err != nil {
			if err.Error() == "" || it != nil {
				t.Fatalf("%q: unreadable (%v) yet read: %+v", raw, err, it)
			}
			return
		}
		checkJob(t, raw, it)
		again, err := fuzzWorker.decode(it.msg.AppendJSON(nil))
		if err != nil {
			t.Fatalf("%q read as %+v, its encoding %s is unreadable: %v", raw, it.msg, it.msg.AppendJSON(nil), err)
		}
		sameJob(t, raw, it, again)
	})
}

// checkJob fails t unless a read job is sorted exactly one way, a failed job for a 400 of its body.
func checkJob(t *testing.T, raw []byte, it *item) {
	t.Helper()
	if _, err := Parse(it.msg.JobID); err != nil {
		t.Fatalf("%q: read with job id %q: %v", raw, it.msg.JobID, err)
	}
	var err error
	switch it.msg.Version {
	case "v2":
		var in lead.Input
		if err = web.Unmarshal(it.msg.Body, &in); err == nil {
			_, err = fuzzWorker.svc.CheckBody(in, lead.ForCreate)
		}
	case "v1":
		_, err = leadv1.Decode(fuzzWorker.svc, it.msg.Body)
	default:
		t.Fatalf("%q: read with version %q", raw, it.msg.Version)
	}
	if (err != nil) != (it.failed != "") {
		t.Fatalf("%q: body error %v, failed %q", raw, err, it.failed)
	}
	if err == nil {
		if !it.pending.Changes.Phone.Present() || !it.pending.Changes.OrderID.Present() || it.pending.Meta.JobID == nil || *it.pending.Meta.JobID != it.msg.JobID {
			t.Fatalf("%q: accepted without what a create needs: %+v", raw, it.pending)
		}
		return
	}
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Invalid || len(e.Fields) == 0 {
		t.Fatalf("%q: failed for good for a fault that is not a 400 with field errors: %v", raw, err)
	}
	if it.msg.Version == "v1" {
		for field := range e.Fields {
			if v1, renamed := leadv1.Names[field]; renamed && !sentMember(it.msg.Body, field) {
				t.Fatalf("%q: a v1 job fails naming the v2 field %s, not %s: %s", raw, field, v1, it.failed)
			}
		}
	}
}

// sameJob fails t unless again, the job of it encoded and decoded again, is the same job with the
// same outcome.
func sameJob(t *testing.T, raw []byte, it, again *item) {
	t.Helper()
	switch {
	case !reflect.DeepEqual(again.msg, sent(it.msg)):
		t.Fatalf("%q read as %+v, encoded again reads as %+v", raw, it.msg, again.msg)
	case again.failed != it.failed:
		t.Fatalf("%q failed with %q, encoded again with %q", raw, it.failed, again.failed)
	case !reflect.DeepEqual(again.pending, it.pending):
		t.Fatalf("%q makes %+v, encoded again %+v", raw, it.pending, again.pending)
	}
}

// sent is m as AppendJSON writes it: a job without a body carries null (both fail alike).
func sent(m Message) Message {
	if len(m.Body) == 0 {
		m.Body = []byte("null")
	}
	return m
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
