package user

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const placeholder = "https://img.example.com/placeholder.png"

func TestViewFormatsTimes(t *testing.T) {
	msk := time.FixedZone("MSK", 3*3600)
	login := time.Date(2026, 11, 21, 13, 5, 9, 999_000_000, msk)
	u := valid()
	u.ID = 5
	u.LastLoginAt = &login
	u.CreatedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, msk)

	v := ViewOf(u, placeholder)
	require.NotNil(t, v.LastLoginAt)
	assert.Equal(t, "2026-11-21 10:05:09", *v.LastLoginAt, "UTC, to the second")
	assert.Nil(t, v.LastActivityAt, "never active is null")
	assert.Equal(t, "2026-01-02T00:04:05+00:00", v.CreatedAt, "RFC 3339 in UTC with +00:00")
}

func TestViewAvatar(t *testing.T) {
	s := func(v string) *string { return &v }
	for name, tc := range map[string]struct {
		avatar *string
		want   string
	}{
		"none":  {nil, placeholder},
		"empty": {s("  "), placeholder},
		"own":   {s("https://cdn.example.com/a.png"), "https://cdn.example.com/a.png"},
	} {
		t.Run(name, func(t *testing.T) {
			u := valid()
			u.Avatar = tc.avatar
			assert.Equal(t, tc.want, ViewOf(u, placeholder).Avatar)
		})
	}
}

func TestViewJSON(t *testing.T) {
	u := valid()
	u.ID = 9
	u.AccessGroup = GroupNone
	u.LanguageSkillsCode = nil
	u.CreatedAt = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	b, err := json.Marshal(ViewOf(u, placeholder))
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"id": 9, "name": null, "lastName": null, "email": "Agent@Example.com ", "isActive": true,
		"accessGroup": "", "webRtcIsEnabled": false, "interfaceLanguageCode": "ru",
		"languageSkillsCode": [], "autoAnswer": 3, "phoneMode": "default",
		"avatar": "`+placeholder+`", "messengerNotificationsEnabled": false, "messengerChatId": null,
		"messengerNotificationsPriority": null, "emailNotificationsEnabled": false,
		"emailNotificationsPriority": null, "lastLoginAt": null, "lastActivityAt": null,
		"createdAt": "2026-05-06T07:08:09+00:00"
	}`, string(b))
}

func TestParseListQuery(t *testing.T) {
	yes, no := true, false
	cc := GroupCallCenter
	tests := map[string]struct {
		query  string
		group  *AccessGroup
		active *bool
		page   listquery.Page
	}{
		"nothing":          {"", nil, nil, listquery.Page{Offset: 0, Limit: 50}},
		"group":            {"accessGroup=call-center", &cc, nil, listquery.Page{Limit: 50}},
		"empty filters":    {"accessGroup=&isActive=", nil, nil, listquery.Page{Limit: 50}},
		"active 1":         {"isActive=1", nil, &yes, listquery.Page{Limit: 50}},
		"active true":      {"isActive=true", nil, &yes, listquery.Page{Limit: 50}},
		"active TRUE":      {"isActive=TRUE", nil, &yes, listquery.Page{Limit: 50}},
		"active 0":         {"isActive=0", nil, &no, listquery.Page{Limit: 50}},
		"active false":     {"isActive=false", nil, &no, listquery.Page{Limit: 50}},
		"page":             {"offset=10&limit=100", nil, nil, listquery.Page{Offset: 10, Limit: 100}},
		"repeated is last": {"accessGroup=admin&accessGroup=call-center", &cc, nil, listquery.Page{Limit: 50}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			require.NoError(t, err)
			f, page, err := ParseListQuery(q)
			require.NoError(t, err)
			assert.Equal(t, tc.group, f.AccessGroup)
			assert.Equal(t, tc.active, f.IsActive)
			assert.Equal(t, tc.page, page)
			assert.Equal(t, page.Offset, f.Offset)
			assert.Equal(t, page.Limit, f.Limit)
		})
	}
}

func TestParseListQueryRefuses(t *testing.T) {
	tests := map[string]struct {
		query, field, message string
	}{
		"unknown group": {"accessGroup=root", "accessGroup",
			`accessGroup: unknown group "root", must be one of client, call-center, call-center-senior, arbitration, moderator, admin`},
		"active yes":  {"isActive=yes", "isActive", `isActive: must be 1, 0, true or false, not "yes"`},
		"active 2":    {"isActive=2", "isActive", `isActive: must be 1, 0, true or false, not "2"`},
		"limit 0":     {"limit=0", "limit", "limit: must be an integer from 1 to 100"},
		"limit 101":   {"limit=101", "limit", "limit: must be an integer from 1 to 100"},
		"offset -1":   {"offset=-1", "offset", "offset: must be an integer >= 0"},
		"offset text": {"offset=x", "offset", "offset: must be an integer >= 0"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			require.NoError(t, err)
			_, _, err = ParseListQuery(q)
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, apperr.Invalid, e.Kind)
			assert.Equal(t, tc.message, e.Message)
			assert.Contains(t, e.Fields, tc.field)
		})
	}
}

func TestRecipientsCheck(t *testing.T) {
	decode := func(t *testing.T, body string) RecipientsRequest {
		var r RecipientsRequest
		require.NoError(t, json.Unmarshal([]byte(body), &r))
		return r
	}
	ok := map[string]struct {
		body string
		want Target
	}{
		"one user": {`{"userId": 4}`, Target{UserID: 4}},
		"all":      {`{"all": true}`, Target{All: true}},
		"group":    {`{"group": "call-center"}`, Target{Group: GroupCallCenter}},
		"extra":    {`{"group": "admin", "title": "ignored"}`, Target{Group: GroupAdmin}},
	}
	for name, tc := range ok {
		t.Run(name, func(t *testing.T) {
			got, err := decode(t, tc.body).Check()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	bad := map[string]struct {
		body, field string
	}{
		"nothing":       {`{}`, "body"},
		"two ways":      {`{"userId": 4, "all": true}`, "body"},
		"all false":     {`{"all": false}`, "all"},
		"all null":      {`{"all": null}`, "all"},
		"user zero":     {`{"userId": 0}`, "userId"},
		"user negative": {`{"userId": -3}`, "userId"},
		"user null":     {`{"userId": null}`, "userId"},
		"unknown group": {`{"group": "root"}`, "group"},
		"empty group":   {`{"group": ""}`, "group"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := decode(t, tc.body).Check()
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, apperr.Invalid, e.Kind)
			assert.Contains(t, e.Fields, tc.field)
		})
	}
}
