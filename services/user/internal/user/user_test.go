package user

import (
	"strings"
	"testing"

	"ccplatform/pkg/apperr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func valid() User {
	return User{Email: "Agent@Example.com ", IsActive: true, AccessGroup: GroupCallCenter,
		InterfaceLanguageCode: "ru", LanguageSkillsCode: []string{"ru", "gb"}, AutoAnswer: 3, PhoneMode: PhoneDefault}
}

func TestPrepareNormalizes(t *testing.T) {
	u, err := Prepare(valid())
	require.NoError(t, err)
	assert.Equal(t, "agent@example.com", u.Email)

	u = valid()
	u.LanguageSkillsCode = nil
	u, err = Prepare(u)
	require.NoError(t, err)
	assert.NotNil(t, u.LanguageSkillsCode, "an empty array, never NULL, goes to the database")
}

func TestPrepareRules(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := map[string]struct {
		change func(*User)
		field  string
	}{
		"email missing":          {func(u *User) { u.Email = " " }, "email"},
		"email without at":       {func(u *User) { u.Email = "agent.example.com" }, "email"},
		"email without domain":   {func(u *User) { u.Email = "agent@" }, "email"},
		"email with space":       {func(u *User) { u.Email = "a b@example.com" }, "email"},
		"email too long":         {func(u *User) { u.Email = strings.Repeat("a", 250) + "@example.com" }, "email"},
		"unknown group":          {func(u *User) { u.AccessGroup = "root" }, "accessGroup"},
		"unknown interface lang": {func(u *User) { u.InterfaceLanguageCode = "en" }, "interfaceLanguageCode"},
		"empty interface lang":   {func(u *User) { u.InterfaceLanguageCode = "" }, "interfaceLanguageCode"},
		"unknown skill":          {func(u *User) { u.LanguageSkillsCode = []string{"ru", "de"} }, "languageSkillsCode"},
		"repeated skill":         {func(u *User) { u.LanguageSkillsCode = []string{"ru", "ru"} }, "languageSkillsCode"},
		"auto answer below":      {func(u *User) { u.AutoAnswer = -2 }, "autoAnswer"},
		"auto answer above":      {func(u *User) { u.AutoAnswer = 11 }, "autoAnswer"},
		"unknown phone mode":     {func(u *User) { u.PhoneMode = "manual" }, "phoneMode"},
		"messenger priority":     {func(u *User) { u.MessengerNotificationsPriority = s("high") }, "messengerNotificationsPriority"},
		"email priority":         {func(u *User) { u.EmailNotificationsPriority = s("") }, "emailNotificationsPriority"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			u := valid()
			tc.change(&u)
			_, err := Prepare(u)
			require.Error(t, err)
			e, ok := apperr.As(err)
			require.True(t, ok)
			assert.Equal(t, apperr.Invalid, e.Kind)
			assert.Contains(t, e.Fields, tc.field)
			assert.Len(t, e.Fields, 1, "only the broken field is reported: %v", e.Fields)
		})
	}
}

func TestPrepareAccepts(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, g := range append(AccessGroups(), GroupNone) {
		u := valid()
		u.AccessGroup = g
		_, err := Prepare(u)
		assert.NoError(t, err, "group %q", g)
	}
	for _, m := range []PhoneMode{PhoneDefault, PhoneOutgoingOnly, PhoneIncomingOnly, PhonePredictive} {
		u := valid()
		u.PhoneMode = m
		_, err := Prepare(u)
		assert.NoError(t, err, "phone mode %q", m)
	}
	for a := AutoAnswerMin; a <= AutoAnswerMax; a++ {
		u := valid()
		u.AutoAnswer = a
		_, err := Prepare(u)
		assert.NoError(t, err, "auto answer %d", a)
	}
	u := valid()
	u.MessengerNotificationsPriority = s(PriorityUrgent)
	u.EmailNotificationsPriority = s(PriorityUrgent)
	u.LanguageSkillsCode = []string{}
	_, err := Prepare(u)
	assert.NoError(t, err)
}

func TestPrepareReportsEveryField(t *testing.T) {
	u := valid()
	u.Email = ""
	u.AutoAnswer = 42
	u.PhoneMode = ""
	_, err := Prepare(u)
	e, ok := apperr.As(err)
	require.True(t, ok)
	assert.Equal(t, "autoAnswer: must be from -1 to 10; email: is required; phoneMode: must be one of default, outgoing-only, incoming-only, predictive", e.Message)
}
