package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/services/user/internal/server"
	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// reset empties the users and agent groups, for tests that assert exact lists and totals.
func (f fixture) reset(t *testing.T) {
	t.Helper()
	_, err := f.db.ExecContext(context.Background(), `TRUNCATE users, agent_groups, idempotency_keys RESTART IDENTITY CASCADE`)
	require.NoError(t, err)
}

func (f fixture) create(t *testing.T, u user.User) int64 {
	t.Helper()
	if u.InterfaceLanguageCode == "" {
		u.InterfaceLanguageCode = "ru"
	}
	if u.PhoneMode == "" {
		u.PhoneMode = user.PhoneDefault
	}
	id, err := f.user.Create(context.Background(), u)
	require.NoError(t, err)
	return id
}

func errorsOf(t *testing.T, env envelope) map[string]string {
	t.Helper()
	var d struct {
		Errors map[string]string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(env.Data, &d), string(env.Data))
	return d.Errors
}

type userPage struct {
	List  []map[string]any `json:"list"`
	Next  int              `json:"next"`
	Total int              `json:"total"`
}

func TestUserList(t *testing.T) {
	f := setup(t)
	f.reset(t)
	admin := f.create(t, user.User{Email: "admin@example.com", IsActive: true, AccessGroup: user.GroupAdmin})
	cc1 := f.create(t, user.User{Email: "cc1@example.com", IsActive: true, AccessGroup: user.GroupCallCenter})
	cc2 := f.create(t, user.User{Email: "cc2@example.com", IsActive: false, AccessGroup: user.GroupCallCenter})
	none := f.create(t, user.User{Email: "none@example.com", IsActive: true})

	tests := map[string]struct {
		query string
		ids   []int64
		next  int
		total int
	}{
		"all":              {"", []int64{admin, cc1, cc2, none}, 4, 4},
		"group":            {"?accessGroup=call-center", []int64{cc1, cc2}, 2, 2},
		"group none found": {"?accessGroup=moderator", nil, 0, 0},
		"active 1":         {"?isActive=1", []int64{admin, cc1, none}, 3, 3},
		"active true":      {"?isActive=true", []int64{admin, cc1, none}, 3, 3},
		"active 0":         {"?isActive=0", []int64{cc2}, 1, 1},
		"active false":     {"?isActive=false", []int64{cc2}, 1, 1},
		"both":             {"?accessGroup=call-center&isActive=1", []int64{cc1}, 1, 1},
		"page":             {"?offset=1&limit=2", []int64{cc1, cc2}, 3, 4},
		"last page":        {"?offset=3&limit=2", []int64{none}, 4, 4},
		"past the end":     {"?offset=10", nil, 10, 4},
		"page of filter":   {"?isActive=1&offset=1&limit=1", []int64{cc1}, 2, 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/v2/user/list", "/v2/user/list/", "/v2/user", "/v2/user/"} {
				code, env := f.do(t, http.MethodGet, path+tc.query, "", authed())
				require.Equal(t, http.StatusOK, code, "%s: %s", path, env.Message)
				assert.True(t, env.Success)
				var page userPage
				require.NoError(t, json.Unmarshal(env.Data, &page))
				require.NotNil(t, page.List, "list is [] when empty")
				var ids []int64
				for _, u := range page.List {
					ids = append(ids, int64(u["id"].(float64)))
				}
				assert.Equal(t, tc.ids, ids, path)
				assert.Equal(t, tc.next, page.Next, path)
				assert.Equal(t, tc.total, page.Total, path)
			}
		})
	}

	bad := map[string]string{
		"?accessGroup=root":  "accessGroup",
		"?accessGroup=Admin": "accessGroup",
		"?isActive=yes":      "isActive",
		"?isActive=2":        "isActive",
		"?limit=0":           "limit",
		"?limit=101":         "limit",
		"?offset=-1":         "offset",
	}
	for query, field := range bad {
		t.Run("bad "+query, func(t *testing.T) {
			code, env := f.do(t, http.MethodGet, "/v2/user/list"+query, "", authed())
			assert.Equal(t, http.StatusBadRequest, code)
			assert.False(t, env.Success)
			assert.Contains(t, errorsOf(t, env), field)
			assert.Contains(t, env.Message, field)
		})
	}
	code, env := f.do(t, http.MethodGet, "/v2/user/list?accessGroup=root", "", authed())
	require.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, env.Message, `"root"`, "the refused value is named")

	code, _ = f.do(t, http.MethodGet, "/v2/user/list", "", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "public routes come through the gateway with the token")
}

func TestUserListDefaultsAndLimit(t *testing.T) {
	f := setup(t)
	f.reset(t)
	for i := range 55 {
		f.create(t, user.User{Email: "bulk" + strconv.Itoa(i) + "@example.com", IsActive: true})
	}
	for query, want := range map[string]int{"": 50, "?limit=100": 55, "?limit=1": 1} {
		code, env := f.do(t, http.MethodGet, "/v2/user/list"+query, "", authed())
		require.Equal(t, http.StatusOK, code)
		var page userPage
		require.NoError(t, json.Unmarshal(env.Data, &page))
		assert.Len(t, page.List, want, query)
		assert.Equal(t, want, page.Next, query)
		assert.Equal(t, 55, page.Total, query)
	}
}

func TestUserDetail(t *testing.T) {
	f := setup(t)
	f.reset(t)
	s := func(v string) *string { return &v }
	login := time.Date(2026, 11, 20, 9, 15, 7, 500_000_000, time.FixedZone("MSK", 3*3600))
	full := f.create(t, user.User{
		Name: s("Ольга"), LastName: s("Иванова"), Email: "olga@example.com", IsActive: true,
		AccessGroup: user.GroupCallCenterSenior, WebRTCEnabled: true, InterfaceLanguageCode: "gb",
		LanguageSkillsCode: []string{"ru", "gb"}, AutoAnswer: -1, PhoneMode: user.PhonePredictive,
		Avatar: s("https://cdn.example.com/olga.png"), MessengerNotificationsEnabled: true,
		MessengerChatID: s("12345"), MessengerNotificationsPriority: s("urgent"),
		EmailNotificationsEnabled: true, LastLoginAt: &login, LastActivityAt: &login,
	})
	bare := f.create(t, user.User{Email: "bare@example.com", IsActive: false})

	code, env := f.do(t, http.MethodGet, "/v2/user/detail/"+itoa(full)+"/", "", authed())
	require.Equal(t, http.StatusOK, code, env.Message)
	var v map[string]any
	require.NoError(t, json.Unmarshal(env.Data, &v))
	want := map[string]any{
		"id": float64(full), "name": "Ольга", "lastName": "Иванова", "email": "olga@example.com",
		"isActive": true, "accessGroup": "call-center-senior", "webRtcIsEnabled": true,
		"interfaceLanguageCode": "gb", "languageSkillsCode": []any{"ru", "gb"}, "autoAnswer": -1.0,
		"phoneMode": "predictive", "avatar": "https://cdn.example.com/olga.png",
		"messengerNotificationsEnabled": true, "messengerChatId": "12345",
		"messengerNotificationsPriority": "urgent", "emailNotificationsEnabled": true,
		"emailNotificationsPriority": nil, "lastLoginAt": "2026-11-20 06:15:07",
		"lastActivityAt": "2026-11-20 06:15:07",
	}
	for k, w := range want {
		assert.Equal(t, w, v[k], k)
	}
	assert.Len(t, v, len(want)+1, "exactly the contract's fields: %v", v)
	created, err := time.Parse(time.RFC3339, v["createdAt"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), created, time.Minute)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`, v["createdAt"])

	code, env = f.do(t, http.MethodGet, "/v2/user/detail/"+itoa(bare), "", authed())
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal(env.Data, &v))
	assert.Nil(t, v["name"])
	assert.Nil(t, v["lastName"])
	assert.Equal(t, "", v["accessGroup"], "no group is an empty string")
	assert.Equal(t, []any{}, v["languageSkillsCode"])
	assert.Equal(t, user.DefaultAvatarPlaceholder, v["avatar"])
	assert.Nil(t, v["lastLoginAt"])
	assert.Nil(t, v["lastActivityAt"])
	assert.Nil(t, v["messengerChatId"])
	assert.Equal(t, false, v["isActive"])

	code, env = f.do(t, http.MethodGet, "/v2/user/detail/"+itoa(bare+100), "", authed())
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "user "+itoa(bare+100)+": not found", env.Message)
	for _, id := range []string{"0", "-1", "abc", "1.5"} {
		code, env = f.do(t, http.MethodGet, "/v2/user/detail/"+id, "", authed())
		assert.Equal(t, http.StatusBadRequest, code, id)
		assert.Equal(t, "userId: must be an integer > 0", env.Message)
	}
}

func TestAvatarPlaceholderIsConfigurable(t *testing.T) {
	f := setup(t)
	f.reset(t)
	id := f.create(t, user.User{Email: "noavatar@example.com", IsActive: true})
	h := server.New(server.Deps{API: ops.API{Ops: ops.New("user"), Log: zap.NewNop(), InternalToken: token}, DB: f.db, AvatarPlaceholder: "https://img.example.org/none.svg",
		Idempotency: idempotency.New(f.db, zap.NewNop())})
	g := fixture{h: h, db: f.db}
	code, env := g.do(t, http.MethodGet, "/v2/user/detail/"+itoa(id), "", authed())
	require.Equal(t, http.StatusOK, code)
	var v map[string]any
	require.NoError(t, json.Unmarshal(env.Data, &v))
	assert.Equal(t, "https://img.example.org/none.svg", v["avatar"])
}

func TestRecipients(t *testing.T) {
	f := setup(t)
	f.reset(t)
	admin := f.create(t, user.User{Email: "admin@example.com", IsActive: true, AccessGroup: user.GroupAdmin})
	cc := f.create(t, user.User{Email: "cc@example.com", IsActive: true, AccessGroup: user.GroupCallCenter, MessengerNotificationsEnabled: true})
	gone := f.create(t, user.User{Email: "gone@example.com", IsActive: false, AccessGroup: user.GroupCallCenter})
	none := f.create(t, user.User{Email: "none@example.com", IsActive: true})

	recipients := func(t *testing.T, body string) []map[string]any {
		t.Helper()
		code, env := f.do(t, http.MethodPost, "/internal/users/recipients", body, authed())
		require.Equal(t, http.StatusOK, code, env.Message)
		var d struct {
			List []map[string]any `json:"list"`
		}
		require.NoError(t, json.Unmarshal(env.Data, &d))
		require.NotNil(t, d.List)
		return d.List
	}
	ids := func(list []map[string]any) []int64 {
		var out []int64
		for _, u := range list {
			out = append(out, int64(u["id"].(float64)))
		}
		return out
	}

	one := recipients(t, `{"userId":`+itoa(cc)+`}`)
	assert.Equal(t, []int64{cc}, ids(one))
	assert.Equal(t, true, one[0]["messengerNotificationsEnabled"], "with the notification settings")
	assert.Contains(t, one[0], "emailNotificationsPriority")
	assert.Equal(t, "cc@example.com", one[0]["email"])
	assert.Equal(t, []int64{gone}, ids(recipients(t, `{"userId":`+itoa(gone)+`}`)), "one named user whatever their state")
	assert.Equal(t, []int64{admin, cc, none}, ids(recipients(t, `{"all":true}`)), "every active user")
	assert.Equal(t, []int64{cc}, ids(recipients(t, `{"group":"call-center"}`)), "active users of the group")
	assert.Equal(t, []map[string]any{}, recipients(t, `{"group":"moderator"}`))

	code, env := f.do(t, http.MethodPost, "/internal/users/recipients", `{"userId":`+itoa(none+50)+`}`, authed())
	assert.Equal(t, http.StatusNotFound, code)
	assert.False(t, env.Success)

	for body, field := range map[string]string{
		`{"group":"root"}`:             "group",
		`{"group":""}`:                 "group",
		`{"userId":0}`:                 "userId",
		`{"all":false}`:                "all",
		`{}`:                           "body",
		`{"all":true,"group":"admin"}`: "body",
		`{"userId":"x"}`:               "userId",
	} {
		code, env := f.do(t, http.MethodPost, "/internal/users/recipients", body, authed())
		assert.Equal(t, http.StatusBadRequest, code, body)
		assert.Contains(t, errorsOf(t, env), field, body)
	}
	code, _ = f.do(t, http.MethodPost, "/internal/users/recipients", `{"all":true}`, nil)
	assert.Equal(t, http.StatusUnauthorized, code)
}

// Partners and agents see only themselves among the users, and agents only their own agent
// groups: anything else answers as if it did not exist.
func TestClientsAndAgentsSeeOnlyThemselves(t *testing.T) {
	f := setup(t)
	f.reset(t)
	client := f.create(t, user.User{Email: "client@example.com", IsActive: true, AccessGroup: user.GroupClient})
	agent := f.create(t, user.User{Email: "agent@example.com", IsActive: true, AccessGroup: user.GroupCallCenter})
	senior := f.create(t, user.User{Email: "senior@example.com", IsActive: true, AccessGroup: user.GroupCallCenterSenior})
	as := func(id int64, group string) map[string]string {
		return map[string]string{"X-Internal-Token": token, "X-User-Id": itoa(id), "X-Access-Group": group}
	}
	type page struct {
		List []struct {
			ID int64 `json:"id"`
		} `json:"list"`
		Total int `json:"total"`
	}
	list := func(h map[string]string, path string) page {
		code, env := f.do(t, http.MethodGet, path, "", h)
		require.Equal(t, http.StatusOK, code, env.Message)
		var p page
		require.NoError(t, json.Unmarshal(env.Data, &p))
		return p
	}
	for name, tc := range map[string]struct {
		id    int64
		group string
	}{"client": {client, "client"}, "agent": {agent, "call-center"}} {
		p := list(as(tc.id, tc.group), "/v2/user/list")
		require.Len(t, p.List, 1, name)
		assert.Equal(t, tc.id, p.List[0].ID, name)
		assert.Equal(t, 1, p.Total, name)
		code, _ := f.do(t, http.MethodGet, "/v2/user/detail/"+itoa(tc.id), "", as(tc.id, tc.group))
		assert.Equal(t, http.StatusOK, code, name)
		_, missing := f.do(t, http.MethodGet, "/v2/user/detail/999999", "", as(tc.id, tc.group))
		code, other := f.do(t, http.MethodGet, "/v2/user/detail/"+itoa(senior), "", as(tc.id, tc.group))
		assert.Equal(t, http.StatusNotFound, code, name)
		assert.Equal(t, strings.Replace(missing.Message, "999999", itoa(senior), 1), other.Message, name)
	}
	assert.Equal(t, 3, list(as(senior, "call-center-senior"), "/v2/user/list").Total, "a senior agent reads every user")

	mine := f.createGroup(t, `{"names":{"ru":"Мои","gb":"Mine"},"agentIds":[`+itoa(agent)+`]}`)
	f.createGroup(t, `{"names":{"ru":"Чужие","gb":"Others"},"agentIds":[`+itoa(senior)+`]}`)
	p := list(as(agent, "call-center"), "/v2/agent-group")
	require.Len(t, p.List, 1)
	assert.Equal(t, mine, p.List[0].ID)
	assert.Zero(t, list(as(agent, "call-center"), "/v2/agent-group?agentId="+itoa(senior)).Total, "another agent's groups match nothing")
	assert.Equal(t, 2, list(as(senior, "call-center-senior"), "/v2/agent-group").Total)
}
