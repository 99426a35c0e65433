package ingest

import (
	"testing"
	"time"
)

// FuzzCallEvent: a telephony event body is decoded and checked without a panic; an accepted one
// makes a call that respects the event's rules.
func FuzzCallEvent(f *testing.F) {
	f.Add([]byte(`{"eventId":"e1","platformCallId":"p1","leadId":1,"orderId":1,"userId":1,"sipEndpointId":1,"direction":"outgoing","statusCode":"answered","clientPhone":"+79161234567","startedAt":"2026-11-21T10:00:00Z","endedAt":"2026-11-21T10:01:00Z"}`))
	f.Add([]byte(`{"eventId":"e\u0000"}`))
	f.Add([]byte(`{"leadId":9223372036854775808}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := Decode(body)
		if err != nil {
			return
		}
		c, err := FromEvent(ev, time.Now())
		if err != nil {
			return
		}
		if c.EndedAt.Before(c.StartedAt) || c.EndedAt.Sub(c.StartedAt) > 24*time.Hour {
			t.Fatalf("%q accepted with an impossible length: %v to %v", body, c.StartedAt, c.EndedAt)
		}
	})
}
