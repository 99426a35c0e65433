package asynccreate

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	uid := int64(42)
	neg := int64(-7)
	ips := []string{"203.0.113.9", "2001:db8::1", `a"b\c`, "tab\there", "ünïcode", "<&>", "\x01\x7f"}
	var msgs []Message
	for _, body := range []string{`{"phone":"+79161234567"}`, "{\n  \"a\": [1, 2, {\"b\": null}]\n}\n", `{}`, `{"s":"\u00e9\"<>"}`} {
		for _, caller := range []*int64{nil, &uid, &neg} {
			msgs = append(msgs, Message{JobID: "0f0e0d0c-0b0a-8908-8706-050403020100", Version: "v2", CreateMethod: "api_v2_async", Body: json.RawMessage(body), CallerUserID: caller})
		}
	}
	for _, ip := range ips {
		msgs = append(msgs, Message{JobID: "x", Version: "v1", CreateMethod: "api_v1_async", Body: json.RawMessage(`{}`), IP: &ip})
		// Request ids come from clients too (the gateway keeps a well-formed one).
		msgs = append(msgs, Message{JobID: "x", Version: "v2", Body: json.RawMessage(`{}`), RequestID: ip, Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	}
	msgs = append(msgs, Message{Version: "v2"})

	for _, m := range msgs {
		got := m.AppendJSON(nil)
		require.True(t, json.Valid(got), "%s", got)
		want, err := json.Marshal(m)
		require.NoError(t, err)
		var a, b any
		require.NoError(t, json.Unmarshal(got, &a))
		require.NoError(t, json.Unmarshal(want, &b))
		assert.Equal(t, b, a, "%s", got)
	}
}

// Accept sizes the job's buffer by room: the longest of each field fits in it.
func TestAJobsEncodingFitsTheRoomAcceptGivesIt(t *testing.T) {
	uid := int64(-9223372036854775808)
	ip := "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"
	m := Message{JobID: "0f0e0d0c-0b0a-8908-8706-050403020100", Version: "v2", CreateMethod: "api_v2_async",
		Body: json.RawMessage(`{"phone":"+79161234567"}`), CallerUserID: &uid, IP: &ip,
		RequestID: "0f0e0d0c-0b0a-8908-8706-050403020100", Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	got := m.AppendJSON(nil)
	assert.LessOrEqual(t, len(got), m.room(), "%s", got)
}
