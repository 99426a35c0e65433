package command

import (
	"encoding/json"
	"strings"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validate(t *testing.T, kind Kind, body string) (recipient.Target, notification.Content, apperr.FieldErrors) {
	t.Helper()
	var req Request
	if err := web.Unmarshal([]byte(body), &req); err != nil {
		e, ok := apperr.As(err)
		require.True(t, ok)
		return recipient.Target{}, notification.Content{}, e.Fields
	}
	target, c, err := req.Validate(kind)
	if err != nil {
		e, ok := apperr.As(err)
		require.True(t, ok)
		return target, c, e.Fields
	}
	return target, c, nil
}

func TestValidatePrivate(t *testing.T) {
	target, c, fe := validate(t, Private, `{"userId":5,"title":" Hi ","text":"Text","priority":"urgent","level":"danger","extra":1}`)
	require.Nil(t, fe)
	assert.Equal(t, recipient.Target{UserID: 5}, target)
	assert.Equal(t, notification.Content{Title: "Hi", Text: "Text", Priority: "urgent", Level: "danger"}, c)

	_, _, fe = validate(t, Private, `{}`)
	assert.Equal(t, apperr.FieldErrors{"userId": "is required", "title": "is required", "text": "is required", "priority": "is required", "level": "is required"}, fe)

	_, _, fe = validate(t, Private, `{"userId":0,"title":"  ","text":"","priority":"high","level":"info"}`)
	assert.Equal(t, apperr.FieldErrors{
		"userId":   "must be an integer > 0",
		"title":    "must not be empty",
		"text":     "must not be empty",
		"priority": "must be one of default, urgent",
		"level":    "must be one of default, success, warning, danger",
	}, fe)

	_, _, fe = validate(t, Private, `{"userId":null,"title":null,"text":"t","priority":null,"level":"default"}`)
	assert.Equal(t, apperr.FieldErrors{"userId": "is required", "title": "is required", "priority": "is required"}, fe)

	_, _, fe = validate(t, Private, `{"userId":"5","title":"t","text":"t","priority":"default","level":"default"}`)
	assert.Equal(t, apperr.FieldErrors{"userId": "must be an integer"}, fe)

	_, _, fe = validate(t, Private, `{"userId":1,"title":"`+strings.Repeat("я", 256)+`","text":"t","priority":"default","level":"default"}`)
	assert.Equal(t, apperr.FieldErrors{"title": "must be at most 255 characters"}, fe)
}

func TestValidatePublicIgnoresTargetFields(t *testing.T) {
	target, _, fe := validate(t, Public, `{"userId":-1,"group":"nope","title":"t","text":"x","priority":"default","level":"success"}`)
	require.Nil(t, fe)
	assert.Equal(t, recipient.Target{All: true}, target)
}

func TestValidateGroup(t *testing.T) {
	for _, g := range recipient.AccessGroups() {
		target, _, fe := validate(t, Group, `{"group":"`+g+`","title":"t","text":"x","priority":"default","level":"warning"}`)
		require.Nil(t, fe, g)
		assert.Equal(t, recipient.Target{Group: g}, target)
	}
	_, _, fe := validate(t, Group, `{"title":"t","text":"x","priority":"default","level":"warning"}`)
	assert.Equal(t, apperr.FieldErrors{"group": "is required"}, fe)
	_, _, fe = validate(t, Group, `{"group":"","title":"t","text":"x","priority":"default","level":"warning"}`)
	assert.Equal(t, apperr.FieldErrors{"group": "must be one of client, call-center, call-center-senior, arbitration, moderator, admin"}, fe)
}

func TestDecode(t *testing.T) {
	const id = "0b6f3c3e-6f55-4d8c-9c55-2f0f1f7c8e11"
	cmd := Command{CommandID: id, Target: recipient.Target{Group: "admin"},
		Content: notification.Content{Title: "t", Text: "x", Priority: "urgent", Level: "default"}}
	raw, err := json.Marshal(cmd)
	require.NoError(t, err)
	assert.JSONEq(t, `{"commandId":"`+id+`","target":{"group":"admin"},"title":"t","text":"x","priority":"urgent","level":"default"}`, string(raw))
	got, err := Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, cmd, got)

	for _, bad := range []string{
		`not json`,
		`{"target":{"all":true},"title":"t","text":"x","priority":"urgent","level":"default"}`,
		`{"commandId":"` + id + `","target":{},"title":"t","text":"x","priority":"urgent","level":"default"}`,
		`{"commandId":"` + id + `","target":{"all":true,"userId":3},"title":"t","text":"x","priority":"urgent","level":"default"}`,
		`{"commandId":"` + id + `","target":{"group":"nobody"},"title":"t","text":"x","priority":"urgent","level":"default"}`,
		`{"commandId":"` + id + `","target":{"all":true},"title":"t","text":"x","priority":"loud","level":"default"}`,
		// Found by FuzzCommandMessage: commands the store or the user service can never take, which
		// were retried up to MaxAttempts instead of dead-lettered at once.
		`{"commandId":"c-1","target":{"all":true},"title":"t","text":"x","priority":"urgent","level":"default"}`,
		`{"commandId":"` + id + `","target":{"all":true,"userId":-1},"title":"t","text":"x","priority":"urgent","level":"default"}`,
		`{"commandId":"` + id + `","target":{"all":true},"title":"a\u0000b","text":"x","priority":"urgent","level":"default"}`,
		`{"commandId":"` + id + `","target":{"all":true},"title":"t","text":"\u0000","priority":"urgent","level":"default"}`,
	} {
		_, err := Decode([]byte(bad))
		assert.Error(t, err, bad)
	}
}
