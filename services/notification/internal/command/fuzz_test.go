package command

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"

	"github.com/google/uuid"
)

// FuzzSendBody: any body of the three send operations decodes and validates without a panic; a
// refusal is a 400 naming fields; an accepted one makes a command that the worker decodes back
// equal from the queue, and whose target and content, sent again as a body, validate the same.
func FuzzSendBody(f *testing.F) {
	for _, seed := range []string{
		`{"userId":5,"title":" Hi ","text":"Text","priority":"urgent","level":"danger","extra":1}`,
		`{"group":"call-center","title":"t","text":"x","priority":"default","level":"success"}`,
		`{"title":"t","text":"x","priority":"default","level":"warning"}`, `{}`, `[]`, `{"userId":0,"group":"nobody"}`,
		`{"userId":9223372036854775808,"title":"a\u0000b"}`, `{"userId":"5","priority":"URGENT","level":null}`,
		`{"title":"  ","text":"\ud800","priority":1}`, `{"title":"t","title":"u"}`, `{"group":null,"userId":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req Request
		if err := web.Unmarshal(body, &req); err != nil {
			if apperr.KindOf(err) != apperr.Invalid {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		for _, kind := range []Kind{Private, Public, Group} {
			target, content, err := req.Validate(kind)
			if err != nil {
				e, ok := apperr.As(err)
				if !ok || e.Kind != apperr.Invalid || len(e.Fields) == 0 {
					t.Fatalf("refusal of %q (kind %d) is not a 400 with field errors: %v", body, kind, err)
				}
				for field, rule := range e.Fields {
					if field == "" || rule == "" {
						t.Fatalf("%q: a field error without a name or rule: %v", body, e.Fields)
					}
				}
				continue
			}
			cmd := Command{CommandID: uuid.NewString(), Target: target, Content: content}
			msg, err := json.Marshal(cmd)
			if err != nil {
				t.Fatalf("%q accepted, its command does not encode: %v", body, err)
			}
			got, err := Decode(msg)
			if err != nil {
				t.Fatalf("%q accepted (kind %d), the worker refuses its command %s: %v", body, kind, msg, err)
			}
			if !reflect.DeepEqual(got, cmd) {
				t.Fatalf("%q: the queue changed %+v into %+v", body, cmd, got)
			}
			again := map[string]any{"title": content.Title, "text": content.Text, "priority": content.Priority, "level": content.Level}
			if target.UserID != 0 {
				again["userId"] = target.UserID
			}
			if target.Group != "" {
				again["group"] = target.Group
			}
			out, _ := json.Marshal(again)
			var req2 Request
			if err := web.Unmarshal(out, &req2); err != nil {
				t.Fatalf("%q accepted, its encoding %s does not decode: %v", body, out, err)
			}
			target2, content2, err := req2.Validate(kind)
			if err != nil || target2 != target || content2 != content {
				t.Fatalf("%q accepted as %+v %+v; %s reads back as %+v %+v, %v", body, target, content, out, target2, content2, err)
			}
		}
	})
}

// FuzzCommandMessage: whatever a notification.commands message holds, the worker's Decode never
// panics; what it accepts is a command the send operations could have made and the store can
// hold (a UUID command id, exactly one kind of target, text PostgreSQL takes), and it encodes
// and decodes back equal. What it refuses is dead-lettered at once.
func FuzzCommandMessage(f *testing.F) {
	for _, seed := range []string{
		`{"commandId":"0b6f3c3e-6f55-4d8c-9c55-2f0f1f7c8e11","target":{"userId":5},"title":"t","text":"x","priority":"urgent","level":"danger"}`,
		`{"commandId":"0b6f3c3e-6f55-4d8c-9c55-2f0f1f7c8e11","target":{"all":true},"title":"t","text":"x","priority":"default","level":"default"}`,
		`{"commandId":"0b6f3c3e-6f55-4d8c-9c55-2f0f1f7c8e11","target":{"group":"admin"},"title":"t","text":"x","priority":"default","level":"success"}`,
		`{"commandId":"","target":{}}`, `{"target":{"userId":1,"all":true}}`, `{"target":{"group":"nobody"}}`, `null`, `[]`, ``,
		`{"commandId":"c","target":{"userId":9223372036854775808}}`, `{"COMMANDID":"c","Target":{"ALL":true}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		cmd, err := Decode(body)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%q refused without a reason", body)
			}
			return
		}
		if _, err := uuid.Parse(cmd.CommandID); err != nil {
			t.Fatalf("%q accepted with command id %q, which the store cannot hold: %v", body, cmd.CommandID, err)
		}
		if !oneKind(cmd.Target) {
			t.Fatalf("%q accepted with a target that is not one user, everyone or one access group: %+v", body, cmd.Target)
		}
		if !cmd.Priority.Valid() || !cmd.Level.Valid() {
			t.Fatalf("%q accepted with priority %q and level %q", body, cmd.Priority, cmd.Level)
		}
		if strings.ContainsRune(cmd.Title, 0) || strings.ContainsRune(cmd.Text, 0) {
			t.Fatalf("%q accepted with a U+0000, which PostgreSQL text cannot hold", body)
		}
		out, err := json.Marshal(cmd)
		if err != nil {
			t.Fatalf("%q accepted, cannot encode it: %v", body, err)
		}
		again, err := Decode(out)
		if err != nil {
			t.Fatalf("%q accepted, its encoding %s is refused: %v", body, out, err)
		}
		if !reflect.DeepEqual(again, cmd) {
			t.Fatalf("%q: round trip changed %+v into %+v", body, cmd, again)
		}
		n := notification.Notification{ID: 1, UserID: 1, Content: cmd.Content}
		if v := n.ToView(); v.Title != cmd.Title || v.Text != cmd.Text || v.Priority != cmd.Priority || v.Level != cmd.Level {
			t.Fatalf("%q: stored as %+v, shown as %+v", body, cmd.Content, v)
		}
	})
}

// oneKind reports whether t names recipients as one send operation does: one user (an id > 0),
// everyone, or one access group, and nothing else (a negative id is not "no user").
func oneKind(t recipient.Target) bool {
	n := 0
	if t.UserID != 0 {
		n++
	}
	if t.All {
		n++
	}
	if t.Group != "" {
		n++
	}
	return n == 1 && t.UserID >= 0 && (t.Group == "" || recipient.ValidGroup(t.Group))
}
