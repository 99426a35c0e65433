package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/cli"
	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createUser runs user create and returns the id it printed.
func createUser(t *testing.T, args ...string) int64 {
	t.Helper()
	out, errOut, err := userAdmin(t, append([]string{"user", "create"}, args...)...)
	require.NoError(t, err, errOut)
	id, err := strconv.ParseInt(strings.TrimSuffix(out, "\n"), 10, 64)
	require.NoError(t, err, "stdout holds the id and nothing else: %q", out)
	assert.Contains(t, errOut, "created user "+strconv.FormatInt(id, 10))
	return id
}

func TestUserCreateStoresEverySetting(t *testing.T) {
	users := user.NewStore(openDB(t))
	ctx := context.Background()
	urgent := user.PriorityUrgent
	s := func(v string) *string { return &v }

	id := createUser(t, "--email", "Agent.Create@Example.com", "--name", "Ирина", "--last-name", "Петрова",
		"--access-group", "call-center", "--active=false",
		"--email-notifications=true", "--email-priority=urgent",
		"--messenger-notifications=true", "--messenger-chat-id", "-100500", "--messenger-priority=none")
	u, err := users.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "agent.create@example.com", u.Email, "stored lower-cased")
	assert.Equal(t, s("Ирина"), u.Name)
	assert.Equal(t, s("Петрова"), u.LastName)
	assert.Equal(t, user.GroupCallCenter, u.AccessGroup)
	assert.False(t, u.IsActive)
	assert.True(t, u.EmailNotificationsEnabled)
	assert.Equal(t, &urgent, u.EmailNotificationsPriority)
	assert.True(t, u.MessengerNotificationsEnabled)
	assert.Equal(t, s("-100500"), u.MessengerChatID)
	assert.Nil(t, u.MessengerNotificationsPriority, "none is null: every notification")

	// Only the address given: the schema's defaults, nulls for what was not said.
	id = createUser(t, "--email", "plain.create@example.com")
	u, err = users.Get(ctx, id)
	require.NoError(t, err)
	assert.True(t, u.IsActive)
	assert.Equal(t, user.GroupNone, u.AccessGroup)
	assert.Nil(t, u.Name)
	assert.Nil(t, u.LastName)
	assert.True(t, u.EmailNotificationsEnabled)
	assert.Nil(t, u.EmailNotificationsPriority)
	assert.False(t, u.MessengerNotificationsEnabled)
	assert.Nil(t, u.MessengerChatID)
	assert.Nil(t, u.MessengerNotificationsPriority)
	assert.Equal(t, "ru", u.InterfaceLanguageCode)
	assert.Equal(t, user.PhoneDefault, u.PhoneMode)
	assert.Empty(t, u.LanguageSkillsCode)

}

func TestUserCreateRefusals(t *testing.T) {
	createUser(t, "--email", "taken.create@example.com")
	tests := map[string]struct {
		args  []string
		usage bool
		kind  apperr.Kind
	}{
		"no email":               {args: []string{"--name", "x"}, usage: true},
		"bad email priority":     {args: []string{"--email", "p1@example.com", "--email-priority", "high"}, usage: true},
		"bad messenger priority": {args: []string{"--email", "p2@example.com", "--messenger-priority", ""}, usage: true},
		"bad bool":               {args: []string{"--email", "p3@example.com", "--active=maybe"}, usage: true},
		"stray argument":         {args: []string{"--email", "p4@example.com", "extra"}, usage: true},
		"unknown group":          {args: []string{"--email", "p5@example.com", "--access-group", "root"}, kind: apperr.Invalid},
		"not an address":         {args: []string{"--email", "nobody"}, kind: apperr.Invalid},
		"address taken":          {args: []string{"--email", "Taken.Create@example.com"}, kind: apperr.Conflict},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := userAdmin(t, append([]string{"user", "create"}, tc.args...)...)
			require.Error(t, err)
			assert.Empty(t, out, "nothing on stdout when a command fails")
			var ue cli.UsageError
			assert.Equal(t, tc.usage, errors.As(err, &ue), "usage error: %v", err)
			if !tc.usage {
				assert.Equal(t, tc.kind, apperr.KindOf(err), "%v", err)
			}
		})
	}
}
