package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type groupItem struct {
	ID        int64             `json:"id"`
	Names     map[string]string `json:"names"`
	AgentIDs  []int64           `json:"agentIds"`
	CreatedAt string            `json:"createdAt"`
	UpdatedAt string            `json:"updatedAt"`
}

type groupPage struct {
	List  []groupItem `json:"list"`
	Next  int         `json:"next"`
	Total int         `json:"total"`
}

func (f fixture) groups(t *testing.T, query string) groupPage {
	t.Helper()
	code, env := f.do(t, http.MethodGet, "/v2/agent-group/"+query, "", authed())
	require.Equal(t, http.StatusOK, code, env.Message)
	var p groupPage
	require.NoError(t, json.Unmarshal(env.Data, &p))
	require.NotNil(t, p.List)
	return p
}

func (f fixture) group(t *testing.T, id int64) groupItem {
	t.Helper()
	for _, g := range f.groups(t, "?limit=100").List {
		if g.ID == id {
			return g
		}
	}
	t.Fatalf("group %d not listed", id)
	return groupItem{}
}

func (f fixture) createGroup(t *testing.T, body string) int64 {
	t.Helper()
	code, env := f.do(t, http.MethodPost, "/v2/agent-group/create/", body, authed())
	require.Equal(t, http.StatusOK, code, env.Message)
	var d struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, json.Unmarshal(env.Data, &d))
	require.Positive(t, d.ID)
	return d.ID
}

func TestAgentGroupCreate(t *testing.T) {
	f := setup(t)
	f.reset(t)
	a := f.create(t, user.User{Email: "a@example.com", IsActive: true, AccessGroup: user.GroupCallCenter})
	b := f.create(t, user.User{Email: "b@example.com", IsActive: true, AccessGroup: user.GroupCallCenter})

	id := f.createGroup(t, `{"names":{"ru":"Продажи","gb":"Sales"},"agentIds":[`+itoa(b)+`,`+itoa(a)+`,`+itoa(b)+`],"createdAt":"ignored"}`)
	g := f.group(t, id)
	assert.Equal(t, map[string]string{"ru": "Продажи", "gb": "Sales"}, g.Names)
	assert.Equal(t, []int64{b, a}, g.AgentIDs)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`, g.CreatedAt)
	assert.Equal(t, g.CreatedAt, g.UpdatedAt)

	bad := map[string]struct {
		body   string
		errors map[string]string
	}{
		"no names":      {`{"agentIds":[1]}`, map[string]string{"names": "is required"}},
		"no ru":         {`{"names":{"gb":"x"},"agentIds":[]}`, map[string]string{"names.ru": "is required"}},
		"no gb":         {`{"names":{"ru":"x"},"agentIds":[]}`, map[string]string{"names.gb": "is required"}},
		"no agents":     {`{"names":{"ru":"x","gb":"y"}}`, map[string]string{"agentIds": "is required"}},
		"empty name":    {`{"names":{"ru":"","gb":"y"},"agentIds":[]}`, map[string]string{"names.ru": "must not be empty"}},
		"agent zero":    {`{"names":{"ru":"x","gb":"y"},"agentIds":[0]}`, map[string]string{"agentIds": "must contain only integers > 0"}},
		"name a number": {`{"names":{"ru":1,"gb":"y"},"agentIds":[]}`, map[string]string{"names.ru": "must be a string"}},
		"unknown agents": {`{"names":{"ru":"x","gb":"y"},"agentIds":[` + itoa(a) + `,987654,987653]}`,
			map[string]string{"agentIds": "unknown user ids: 987654, 987653"}},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			code, env := f.do(t, http.MethodPost, "/v2/agent-group/create", tc.body, authed())
			assert.Equal(t, http.StatusBadRequest, code)
			assert.False(t, env.Success)
			assert.Equal(t, tc.errors, errorsOf(t, env))
		})
	}
	assert.Equal(t, 1, f.groups(t, "").Total, "refused creates leave nothing")

	code, env := f.do(t, http.MethodPost, "/v2/agent-group/create", `{"names":`, authed())
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, env.Message, "body")
	code, _ = f.do(t, http.MethodPost, "/v2/agent-group/create", `{}`, map[string]string{"X-Internal-Token": token, "Content-Type": "text/plain"})
	assert.Equal(t, http.StatusUnsupportedMediaType, code)
}

func TestAgentGroupCreateIsIdempotent(t *testing.T) {
	f := setup(t)
	f.reset(t)
	body := `{"names":{"ru":"Повтор","gb":"Retry"},"agentIds":[]}`
	headers := map[string]string{"X-Internal-Token": token, "Idempotency-Key": "group-1", "X-User-Id": "1"}
	code, first := f.do(t, http.MethodPost, "/v2/agent-group/create", body, headers)
	require.Equal(t, http.StatusOK, code)
	code, again := f.do(t, http.MethodPost, "/v2/agent-group/create", body, headers)
	require.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, string(first.Data), string(again.Data), "the same key and body replay the answer")
	assert.Equal(t, 1, f.groups(t, "").Total)

	code, env := f.do(t, http.MethodPost, "/v2/agent-group/create", strings.Replace(body, "Retry", "Other", 1), headers)
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, env.Message, "Idempotency-Key")
}

func TestAgentGroupUpdate(t *testing.T) {
	f := setup(t)
	f.reset(t)
	a := f.create(t, user.User{Email: "a@example.com", IsActive: true})
	b := f.create(t, user.User{Email: "b@example.com", IsActive: true})
	id := f.createGroup(t, `{"names":{"ru":"Продажи","gb":"Sales"},"agentIds":[`+itoa(a)+`]}`)
	path := "/v2/agent-group/update/" + itoa(id) + "/"
	update := func(t *testing.T, body string) {
		t.Helper()
		code, env := f.do(t, http.MethodPost, path, body, authed())
		require.Equal(t, http.StatusOK, code, env.Message)
		assert.True(t, env.Success)
		assert.JSONEq(t, `[]`, string(env.Data))
	}

	update(t, `{"names":{"gb":"Sales team"}}`)
	g := f.group(t, id)
	assert.Equal(t, map[string]string{"ru": "Продажи", "gb": "Sales team"}, g.Names, "the unsent language is kept")
	assert.Equal(t, []int64{a}, g.AgentIDs, "unsent agents are kept")

	update(t, `{"agentIds":[`+itoa(b)+`,`+itoa(a)+`]}`)
	g = f.group(t, id)
	assert.Equal(t, []int64{b, a}, g.AgentIDs, "agentIds replaces the set")
	assert.Equal(t, "Sales team", g.Names["gb"])

	update(t, `{"names":{"ru":"Отдел продаж","gb":"Sales"},"agentIds":[]}`)
	g = f.group(t, id)
	assert.Equal(t, map[string]string{"ru": "Отдел продаж", "gb": "Sales"}, g.Names)
	assert.Equal(t, []int64{}, g.AgentIDs)

	update(t, `{}`)
	assert.Equal(t, g, f.group(t, id), "an empty body changes nothing")

	for body, field := range map[string]string{
		`{"names":null}`:        "names",
		`{"names":{"ru":""}}`:   "names.ru",
		`{"agentIds":null}`:     "agentIds",
		`{"agentIds":[-1]}`:     "agentIds",
		`{"agentIds":[987654]}`: "agentIds",
	} {
		code, env := f.do(t, http.MethodPost, path, body, authed())
		assert.Equal(t, http.StatusBadRequest, code, body)
		assert.Contains(t, errorsOf(t, env), field, body)
	}
	assert.Equal(t, g, f.group(t, id), "refused updates change nothing")

	code, env := f.do(t, http.MethodPost, "/v2/agent-group/update/"+itoa(id+100), `{"names":{"ru":"x"}}`, authed())
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "agent group "+itoa(id+100)+": not found", env.Message)
	for _, bad := range []string{"0", "-3", "x"} {
		code, env = f.do(t, http.MethodPost, "/v2/agent-group/update/"+bad, `{}`, authed())
		assert.Equal(t, http.StatusBadRequest, code, bad)
		assert.Equal(t, "id: must be an integer > 0", env.Message)
	}
}

func TestAgentGroupList(t *testing.T) {
	f := setup(t)
	f.reset(t)
	a := f.create(t, user.User{Email: "a@example.com", IsActive: true})
	b := f.create(t, user.User{Email: "b@example.com", IsActive: true})
	c := f.create(t, user.User{Email: "c@example.com", IsActive: true})
	g1 := f.createGroup(t, `{"names":{"ru":"1","gb":"1"},"agentIds":[`+itoa(a)+`,`+itoa(b)+`]}`)
	g2 := f.createGroup(t, `{"names":{"ru":"2","gb":"2"},"agentIds":[`+itoa(b)+`]}`)
	g3 := f.createGroup(t, `{"names":{"ru":"3","gb":"3"},"agentIds":[]}`)

	ids := func(p groupPage) []int64 {
		var out []int64
		for _, g := range p.List {
			out = append(out, g.ID)
		}
		return out
	}
	tests := map[string]struct {
		query       string
		want        []int64
		next, total int
	}{
		"all":           {"", []int64{g1, g2, g3}, 3, 3},
		"agent a":       {"?agentId=" + itoa(a), []int64{g1}, 1, 1},
		"agent b":       {"?agentId=" + itoa(b), []int64{g1, g2}, 2, 2},
		"agent c":       {"?agentId=" + itoa(c), nil, 0, 0},
		"page":          {"?offset=1&limit=1", []int64{g2}, 2, 3},
		"filtered page": {"?agentId=" + itoa(b) + "&offset=1&limit=5", []int64{g2}, 2, 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/v2/agent-group", "/v2/agent-group/"} {
				code, env := f.do(t, http.MethodGet, path+tc.query, "", authed())
				require.Equal(t, http.StatusOK, code, env.Message)
				var p groupPage
				require.NoError(t, json.Unmarshal(env.Data, &p))
				assert.Equal(t, tc.want, ids(p))
				assert.Equal(t, tc.next, p.Next)
				assert.Equal(t, tc.total, p.Total)
			}
		})
	}
	p := f.groups(t, "?agentId="+itoa(b))
	assert.Equal(t, []int64{a, b}, p.List[0].AgentIDs, "a filtered group still lists all its agents")
	assert.NotEmpty(t, p.List[0].CreatedAt)
	assert.NotEmpty(t, p.List[0].UpdatedAt)

	for query, field := range map[string]string{"?agentId=0": "agentId", "?agentId=-1": "agentId", "?agentId=x": "agentId", "?limit=101": "limit"} {
		code, env := f.do(t, http.MethodGet, "/v2/agent-group"+query, "", authed())
		assert.Equal(t, http.StatusBadRequest, code, query)
		assert.Contains(t, errorsOf(t, env), field, query)
	}
}

func TestAgentGroupsCheck(t *testing.T) {
	f := setup(t)
	f.reset(t)
	id := f.createGroup(t, `{"names":{"ru":"x","gb":"y"},"agentIds":[]}`)
	for body, want := range map[string][]int64{
		`{"ids":[` + itoa(id) + `]}`:                 {},
		`{"ids":[` + itoa(id) + `,987654,0,987654]}`: {987654, 0},
		`{"ids":[]}`: {},
		`{}`:         {},
	} {
		code, env := f.do(t, http.MethodPost, "/internal/agent-groups/check/", body, authed())
		require.Equal(t, http.StatusOK, code, body)
		var d struct {
			Missing []int64 `json:"missing"`
		}
		require.NoError(t, json.Unmarshal(env.Data, &d))
		assert.Equal(t, want, d.Missing, body)
	}
	code, _ := f.do(t, http.MethodPost, "/internal/agent-groups/check", `{"ids":["x"]}`, authed())
	assert.Equal(t, http.StatusBadRequest, code)
	code, _ = f.do(t, http.MethodPost, "/internal/agent-groups/check", `{"ids":[1]}`, nil)
	assert.Equal(t, http.StatusUnauthorized, code)
}

func TestAgentGroupsRecordTheirAuthors(t *testing.T) {
	f := setup(t)
	f.reset(t)
	body := `{"names":{"ru":"Авторы","gb":"Authors"},"agentIds":[]}`
	code, env := f.do(t, http.MethodPost, "/v2/agent-group/create", body, map[string]string{"X-Internal-Token": token, "X-User-Id": "41", "X-Access-Group": "admin"})
	require.Equal(t, http.StatusOK, code, env.Message)
	var created struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, json.Unmarshal(env.Data, &created))
	code, env = f.do(t, http.MethodPost, "/v2/agent-group/update/"+itoa(created.ID), `{"names":{"ru":"Авторы 2"}}`,
		map[string]string{"X-Internal-Token": token, "X-User-Id": "42", "X-Access-Group": "moderator"})
	require.Equal(t, http.StatusOK, code, env.Message)
	var by struct {
		Created *int64 `db:"created_by"`
		Updated *int64 `db:"updated_by"`
	}
	require.NoError(t, f.db.Get(&by, `SELECT created_by, updated_by FROM agent_groups WHERE id = $1`, created.ID))
	require.NotNil(t, by.Created)
	require.NotNil(t, by.Updated)
	assert.Equal(t, int64(41), *by.Created)
	assert.Equal(t, int64(42), *by.Updated)
}
