package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The public API has no operation that creates users, so the tests that need users of their own
// (for exact lists and totals) make them with user-admin user create, as an operator would;
// everything else goes through the gateway.

// e2eUser is a user a test makes for itself.
type e2eUser struct {
	email  string
	group  string
	active bool
}

// insertUsers makes users with user-admin and returns their ids in order.
func insertUsers(t *testing.T, users ...e2eUser) []int64 {
	t.Helper()
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = createUser(t, u.email, "--access-group", u.group, "--active="+strconv.FormatBool(u.active))
	}
	return ids
}

// uniqueEmail keeps the rows of one test apart from every other test's.
func uniqueEmail(label string) string {
	return fmt.Sprintf("%s.%d@e2e.example.com", label, time.Now().UnixNano())
}

type userPageData struct {
	List  []map[string]any `json:"list"`
	Next  int              `json:"next"`
	Total int              `json:"total"`
}

func listUsers(t *testing.T, path string) userPageData {
	t.Helper()
	r := stack.Call(t, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.True(t, r.Env.Success)
	var p userPageData
	require.NoError(t, json.Unmarshal(r.Env.Data, &p))
	require.NotNil(t, p.List, "list is [] when empty")
	return p
}

func idsOf(list []map[string]any) []int64 {
	out := []int64{}
	for _, item := range list {
		out = append(out, int64(item["id"].(float64)))
	}
	return out
}

func TestUserListFilters(t *testing.T) {
	ids := insertUsers(t,
		e2eUser{email: uniqueEmail("mod.active"), group: "moderator", active: true},
		e2eUser{email: uniqueEmail("mod.gone"), group: "moderator", active: false},
		e2eUser{email: uniqueEmail("nogroup"), group: "", active: true},
	)
	modActive, modGone, noGroup := ids[0], ids[1], ids[2]

	// Every user, to derive what each filter must give (other tests change demo users' state).
	all := listUsers(t, "/v2/user/list/?limit=100")
	require.Less(t, all.Total, 100, "the whole list fits one page")
	require.Len(t, all.List, all.Total)
	byID := map[int64]map[string]any{}
	for _, u := range all.List {
		byID[int64(u["id"].(float64))] = u
	}
	want := func(keep func(u map[string]any) bool) []int64 {
		out := []int64{}
		for _, id := range idsOf(all.List) {
			if keep(byID[id]) {
				out = append(out, id)
			}
		}
		return out
	}
	group := func(g string) func(map[string]any) bool {
		return func(u map[string]any) bool { return u["accessGroup"] == g }
	}
	active := func(a bool) func(map[string]any) bool {
		return func(u map[string]any) bool { return u["isActive"] == a }
	}

	for _, g := range []string{"client", "call-center", "call-center-senior", "arbitration", "moderator", "admin"} {
		t.Run("accessGroup "+g, func(t *testing.T) {
			p := listUsers(t, "/v2/user/list/?limit=100&accessGroup="+g)
			assert.Equal(t, want(group(g)), idsOf(p.List))
			assert.Equal(t, len(p.List), p.Total, "total counts after the filter")
			assert.Positive(t, p.Total, "the demo data has a user of every group")
		})
	}
	mods := listUsers(t, "/v2/user/list/?limit=100&accessGroup=moderator")
	assert.Contains(t, idsOf(mods.List), modActive)
	assert.Contains(t, idsOf(mods.List), modGone)
	assert.NotContains(t, idsOf(mods.List), noGroup)
	assert.Equal(t, "", byID[noGroup]["accessGroup"], "no group is an empty string")

	for _, tc := range []struct {
		value string
		is    bool
	}{{"1", true}, {"true", true}, {"0", false}, {"false", false}} {
		t.Run("isActive "+tc.value, func(t *testing.T) {
			p := listUsers(t, "/v2/user/list/?limit=100&isActive="+tc.value)
			assert.Equal(t, want(active(tc.is)), idsOf(p.List))
			assert.Equal(t, len(p.List), p.Total)
			assert.Contains(t, idsOf(p.List), map[bool]int64{true: modActive, false: modGone}[tc.is])
		})
	}
	p := listUsers(t, "/v2/user/list/?accessGroup=moderator&isActive=0")
	assert.Contains(t, idsOf(p.List), modGone)
	assert.NotContains(t, idsOf(p.List), modActive)
	for _, u := range p.List {
		assert.Equal(t, "moderator", u["accessGroup"])
		assert.Equal(t, false, u["isActive"])
	}

	t.Run("the sample call's path", func(t *testing.T) {
		alias := listUsers(t, "/v2/user/?limit=100")
		assert.Equal(t, idsOf(all.List), idsOf(alias.List))
		assert.Equal(t, all.Total, alias.Total)
		alias = listUsers(t, "/v2/user?isActive=1&limit=100")
		assert.Equal(t, want(active(true)), idsOf(alias.List))
	})

	bad := map[string]string{
		"accessGroup=root":      "accessGroup",
		"accessGroup=CLIENT":    "accessGroup",
		"isActive=yes":          "isActive",
		"isActive=2":            "isActive",
		"isActive=-1":           "isActive",
		"limit=0":               "limit",
		"limit=101":             "limit",
		"offset=-1":             "offset",
		"offset=abc":            "offset",
		"accessGroup=x&limit=0": "limit",
	}
	for query, field := range bad {
		t.Run("bad "+query, func(t *testing.T) {
			r := stack.Call(t, http.MethodGet, "/v2/user/list/?"+query, nil)
			assert.Equal(t, http.StatusBadRequest, r.Status)
			assert.False(t, r.Env.Success)
			assert.Contains(t, r.Errors(t), field)
			assert.Contains(t, r.Env.Message, field)
		})
	}
	r := stack.Call(t, http.MethodGet, "/v2/user/list/?accessGroup=root", nil)
	assert.Contains(t, r.Env.Message, `"root"`, "the unknown value is named")
}

func TestUserListPagination(t *testing.T) {
	all := listUsers(t, "/v2/user/list/?limit=100")
	require.GreaterOrEqual(t, all.Total, 5)
	assert.Equal(t, all.Total, all.Next)

	def := listUsers(t, "/v2/user/list/")
	assert.Equal(t, idsOf(all.List)[:min(50, all.Total)], idsOf(def.List), "default offset 0, limit 50")

	var paged []int64
	for offset := 0; offset < all.Total; {
		p := listUsers(t, fmt.Sprintf("/v2/user/list/?offset=%d&limit=2", offset))
		require.NotEmpty(t, p.List)
		assert.LessOrEqual(t, len(p.List), 2)
		assert.Equal(t, offset+len(p.List), p.Next)
		assert.Equal(t, all.Total, p.Total, "total ignores the page")
		paged = append(paged, idsOf(p.List)...)
		offset = p.Next
	}
	assert.Equal(t, idsOf(all.List), paged, "pages walk the list in a stable order")
	assert.IsIncreasing(t, paged, "ordered by id")

	past := listUsers(t, fmt.Sprintf("/v2/user/list/?offset=%d", all.Total+5))
	assert.Empty(t, past.List)
	assert.Equal(t, all.Total+5, past.Next)
	assert.Equal(t, all.Total, past.Total)
}

func TestUserDetail(t *testing.T) {
	id := insertUsers(t, e2eUser{email: uniqueEmail("detail"), group: "", active: true})[0]

	r := stack.Call(t, http.MethodGet, "/v2/user/detail/"+strconv.FormatInt(id, 10)+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	d := r.Data(t)
	assert.Equal(t, float64(id), d["id"])
	assert.Nil(t, d["lastLoginAt"], "never logged in is null")
	assert.Nil(t, d["lastActivityAt"], "never active is null")
	assert.Nil(t, d["name"])
	assert.Nil(t, d["lastName"])
	assert.Equal(t, "", d["accessGroup"])
	assert.Equal(t, []any{}, d["languageSkillsCode"], "an array, never null")
	assert.Regexp(t, `^https?://\S+$`, d["avatar"], "a placeholder link when the user has none")
	assert.Nil(t, d["messengerNotificationsPriority"])
	assert.Nil(t, d["emailNotificationsPriority"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`, d["createdAt"])
	created, err := time.Parse(time.RFC3339, d["createdAt"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), created, time.Minute)

	// A demo user with every setting filled in: the contract's types throughout.
	var adminID int64
	for _, u := range listUsers(t, "/v2/user/list/?accessGroup=admin&limit=100").List {
		if u["email"] == "admin@demo.callcenter.local" {
			adminID = int64(u["id"].(float64))
		}
	}
	require.Positive(t, adminID, "the demo admin is listed")
	admin := stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/user/detail/%d", adminID), nil)
	require.Equal(t, http.StatusOK, admin.Status, "%s", admin.Body)
	a := admin.Data(t)
	assert.Equal(t, "admin", a["accessGroup"])
	assert.Equal(t, true, a["isActive"])
	assert.Equal(t, "Алексей", a["name"])
	assert.Equal(t, "https://demo.callcenter.local/avatars/admin.png", a["avatar"])
	assert.Equal(t, "urgent", a["messengerNotificationsPriority"])
	assert.Equal(t, "100200301", a["messengerChatId"])
	assert.Equal(t, []any{"ru", "gb"}, a["languageSkillsCode"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`, a["lastLoginAt"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`, a["lastActivityAt"])
	for _, k := range []string{"webRtcIsEnabled", "messengerNotificationsEnabled", "emailNotificationsEnabled"} {
		assert.IsType(t, true, a[k], k)
	}
	assert.IsType(t, float64(0), a["autoAnswer"])
	assert.GreaterOrEqual(t, a["autoAnswer"], -1.0)
	assert.LessOrEqual(t, a["autoAnswer"], 10.0)
	assert.Contains(t, []any{"default", "outgoing-only", "incoming-only", "predictive"}, a["phoneMode"])
	assert.Contains(t, []any{"ru", "gb"}, a["interfaceLanguageCode"])
	assert.Len(t, a, 20, "exactly the contract's fields")

	r = stack.Call(t, http.MethodGet, "/v2/user/detail/987654321/", nil)
	assert.Equal(t, http.StatusNotFound, r.Status)
	assert.False(t, r.Env.Success)
	assert.JSONEq(t, `[]`, string(r.Env.Data))
	for _, bad := range []string{"0", "-1", "abc"} {
		r = stack.Call(t, http.MethodGet, "/v2/user/detail/"+bad+"/", nil)
		assert.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, r.Status, bad)
		assert.False(t, r.Env.Success)
	}
}

type agentGroupData struct {
	ID        int64             `json:"id"`
	Names     map[string]string `json:"names"`
	AgentIDs  []int64           `json:"agentIds"`
	CreatedAt string            `json:"createdAt"`
	UpdatedAt string            `json:"updatedAt"`
}

type agentGroupPageData struct {
	List  []agentGroupData `json:"list"`
	Next  int              `json:"next"`
	Total int              `json:"total"`
}

func listAgentGroups(t *testing.T, query string) agentGroupPageData {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/agent-group/"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var p agentGroupPageData
	require.NoError(t, json.Unmarshal(r.Env.Data, &p))
	require.NotNil(t, p.List)
	return p
}

// agentGroupByID reads a group from the list (there is no detail operation for groups).
func agentGroupByID(t *testing.T, id int64) agentGroupData {
	t.Helper()
	for offset := 0; ; {
		p := listAgentGroups(t, fmt.Sprintf("?offset=%d&limit=100", offset))
		for _, g := range p.List {
			if g.ID == id {
				return g
			}
		}
		if len(p.List) == 0 {
			t.Fatalf("agent group %d is not listed", id)
		}
		offset = p.Next
	}
}

func createAgentGroup(t *testing.T, body any, opts ...Option) int64 {
	t.Helper()
	r := stack.Call(t, http.MethodPost, "/v2/agent-group/create/", body, opts...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	id := int64(r.Data(t)["id"].(float64))
	require.Positive(t, id)
	return id
}

func TestAgentGroupCreate(t *testing.T) {
	agents := insertUsers(t,
		e2eUser{email: uniqueEmail("ag.create.a"), group: "call-center", active: true},
		e2eUser{email: uniqueEmail("ag.create.b"), group: "call-center", active: true},
	)
	body := map[string]any{"names": map[string]any{"ru": "Продажи E2E", "gb": "Sales E2E"}, "agentIds": []int64{agents[1], agents[0], agents[1]}}
	id := createAgentGroup(t, body, WithHeader("Idempotency-Key", "e2e-agent-group"))

	again := stack.Call(t, http.MethodPost, "/v2/agent-group/create/", body, WithHeader("Idempotency-Key", "e2e-agent-group"))
	require.Equal(t, http.StatusOK, again.Status, "%s", again.Body)
	assert.Equal(t, float64(id), again.Data(t)["id"], "the same key and body replay the first answer")
	other := stack.Call(t, http.MethodPost, "/v2/agent-group/create/",
		map[string]any{"names": map[string]any{"ru": "x", "gb": "y"}, "agentIds": []int64{}}, WithHeader("Idempotency-Key", "e2e-agent-group"))
	assert.Equal(t, http.StatusConflict, other.Status)

	g := agentGroupByID(t, id)
	assert.Equal(t, map[string]string{"ru": "Продажи E2E", "gb": "Sales E2E"}, g.Names)
	assert.Equal(t, []int64{agents[1], agents[0]}, g.AgentIDs, "repeats dropped, order kept")
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`, g.CreatedAt)
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`, g.UpdatedAt)

	before := listAgentGroups(t, "").Total
	names := map[string]any{"ru": "Группа", "gb": "Group"}
	bad := map[string]struct {
		body  any
		field string
		rule  string
	}{
		"names missing":    {map[string]any{"agentIds": []int64{agents[0]}}, "names", "is required"},
		"names null":       {map[string]any{"names": nil, "agentIds": []int64{}}, "names", ""},
		"names.ru missing": {map[string]any{"names": map[string]any{"gb": "Group"}, "agentIds": []int64{}}, "names.ru", "is required"},
		"names.gb missing": {map[string]any{"names": map[string]any{"ru": "Группа"}, "agentIds": []int64{}}, "names.gb", "is required"},
		"names.ru empty":   {map[string]any{"names": map[string]any{"ru": " ", "gb": "Group"}, "agentIds": []int64{}}, "names.ru", "must not be empty"},
		"names.gb number":  {map[string]any{"names": map[string]any{"ru": "Группа", "gb": 5}, "agentIds": []int64{}}, "names.gb", "must be a string"},
		"agentIds missing": {map[string]any{"names": names}, "agentIds", "is required"},
		"agentIds null":    {map[string]any{"names": names, "agentIds": nil}, "agentIds", ""},
		"agentIds zero":    {map[string]any{"names": names, "agentIds": []int{0}}, "agentIds", "must contain only integers > 0"},
		"agentIds strings": {map[string]any{"names": names, "agentIds": []string{"1"}}, "agentIds[0]", "must be an integer"},
		"unknown agents": {map[string]any{"names": names, "agentIds": []int64{agents[0], 987654321, 987654322}},
			"agentIds", "unknown user ids: 987654321, 987654322"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			r := stack.Call(t, http.MethodPost, "/v2/agent-group/create/", tc.body)
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
			assert.False(t, r.Env.Success)
			errs := r.Errors(t)
			require.Contains(t, errs, tc.field)
			if tc.rule != "" {
				assert.Equal(t, tc.rule, errs[tc.field])
			}
			assert.Contains(t, r.Env.Message, tc.field)
		})
	}
	r := stack.Call(t, http.MethodPost, "/v2/agent-group/create/", map[string]any{})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, map[string]string{"names": "is required", "agentIds": "is required"}, r.Errors(t), "every missing field at once")
	assert.Equal(t, before, listAgentGroups(t, "").Total, "refused creates make no group")
}

func TestAgentGroupUpdate(t *testing.T) {
	agents := insertUsers(t,
		e2eUser{email: uniqueEmail("ag.update.a"), group: "call-center", active: true},
		e2eUser{email: uniqueEmail("ag.update.b"), group: "call-center-senior", active: true},
	)
	id := createAgentGroup(t, map[string]any{"names": map[string]any{"ru": "Поддержка", "gb": "Support"}, "agentIds": []int64{agents[0]}})
	path := "/v2/agent-group/update/" + strconv.FormatInt(id, 10) + "/"
	created := agentGroupByID(t, id)
	time.Sleep(1100 * time.Millisecond) // updatedAt is written to the second

	update := func(t *testing.T, body any) {
		t.Helper()
		r := stack.Call(t, http.MethodPost, path, body)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.True(t, r.Env.Success)
		assert.JSONEq(t, `[]`, string(r.Env.Data))
	}

	update(t, map[string]any{"names": map[string]any{"gb": "Customer care"}})
	g := agentGroupByID(t, id)
	assert.Equal(t, map[string]string{"ru": "Поддержка", "gb": "Customer care"}, g.Names, "the unsent language keeps its name")
	assert.Equal(t, []int64{agents[0]}, g.AgentIDs, "unsent agentIds are kept")
	assert.Equal(t, created.CreatedAt, g.CreatedAt)
	assert.NotEqual(t, created.UpdatedAt, g.UpdatedAt, "updatedAt moves")

	update(t, map[string]any{"agentIds": []int64{agents[1], agents[0]}})
	g = agentGroupByID(t, id)
	assert.Equal(t, []int64{agents[1], agents[0]}, g.AgentIDs, "agentIds replaces the set")
	assert.Equal(t, "Customer care", g.Names["gb"])

	update(t, map[string]any{"agentIds": []int64{}, "names": map[string]any{"ru": "Забота о клиентах"}})
	g = agentGroupByID(t, id)
	assert.Equal(t, []int64{}, g.AgentIDs)
	assert.Equal(t, map[string]string{"ru": "Забота о клиентах", "gb": "Customer care"}, g.Names)

	update(t, map[string]any{"unknown": true})
	assert.Equal(t, g, agentGroupByID(t, id), "a body without known fields changes nothing")

	for name, body := range map[string]any{
		"names null":     map[string]any{"names": nil},
		"empty name":     map[string]any{"names": map[string]any{"ru": ""}},
		"agentIds null":  map[string]any{"agentIds": nil},
		"agent zero":     map[string]any{"agentIds": []int{0}},
		"unknown agents": map[string]any{"agentIds": []int64{agents[0], 987654321}},
	} {
		r := stack.Call(t, http.MethodPost, path, body)
		assert.Equal(t, http.StatusBadRequest, r.Status, name)
	}
	r := stack.Call(t, http.MethodPost, path, map[string]any{"agentIds": []int64{987654321}})
	assert.Equal(t, "unknown user ids: 987654321", r.Errors(t)["agentIds"])
	assert.Equal(t, g, agentGroupByID(t, id), "refused updates change nothing")

	r = stack.Call(t, http.MethodPost, "/v2/agent-group/update/987654321/", map[string]any{"names": map[string]any{"ru": "x"}})
	assert.Equal(t, http.StatusNotFound, r.Status)
	assert.False(t, r.Env.Success)
	for _, bad := range []string{"0", "-1", "abc"} {
		r = stack.Call(t, http.MethodPost, "/v2/agent-group/update/"+bad+"/", map[string]any{})
		assert.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, r.Status, bad)
		assert.False(t, r.Env.Success)
	}
}

func TestAgentGroupListFilterAndPagination(t *testing.T) {
	agents := insertUsers(t,
		e2eUser{email: uniqueEmail("ag.list.a"), group: "call-center", active: true},
		e2eUser{email: uniqueEmail("ag.list.b"), group: "call-center", active: true},
		e2eUser{email: uniqueEmail("ag.list.none"), group: "call-center", active: true},
	)
	a, b, none := agents[0], agents[1], agents[2]
	g1 := createAgentGroup(t, map[string]any{"names": map[string]any{"ru": "Л1", "gb": "L1"}, "agentIds": []int64{a, b}})
	g2 := createAgentGroup(t, map[string]any{"names": map[string]any{"ru": "Л2", "gb": "L2"}, "agentIds": []int64{b}})
	g3 := createAgentGroup(t, map[string]any{"names": map[string]any{"ru": "Л3", "gb": "L3"}, "agentIds": []int64{b, a}})

	q := func(agent int64, extra string) string { return "?agentId=" + strconv.FormatInt(agent, 10) + extra }
	groupIDs := func(p agentGroupPageData) []int64 {
		out := []int64{}
		for _, g := range p.List {
			out = append(out, g.ID)
		}
		return out
	}

	p := listAgentGroups(t, q(a, ""))
	assert.Equal(t, []int64{g1, g3}, groupIDs(p))
	assert.Equal(t, 2, p.Total, "total counts after the filter")
	assert.Equal(t, 2, p.Next)
	assert.Equal(t, []int64{a, b}, p.List[0].AgentIDs, "a filtered group lists all its agents")
	for _, g := range p.List {
		assert.NotEmpty(t, g.CreatedAt)
		assert.NotEmpty(t, g.UpdatedAt)
		assert.NotEmpty(t, g.Names["ru"])
		assert.NotEmpty(t, g.Names["gb"])
	}

	p = listAgentGroups(t, q(b, ""))
	assert.Equal(t, []int64{g1, g2, g3}, groupIDs(p))
	assert.Equal(t, 3, p.Total)

	p = listAgentGroups(t, q(b, "&offset=1&limit=1"))
	assert.Equal(t, []int64{g2}, groupIDs(p))
	assert.Equal(t, 2, p.Next)
	assert.Equal(t, 3, p.Total)

	p = listAgentGroups(t, q(none, ""))
	assert.Empty(t, p.List)
	assert.Equal(t, 0, p.Total)

	all := listAgentGroups(t, "?limit=100")
	assert.GreaterOrEqual(t, all.Total, 5, "the demo groups and this test's")
	assert.Equal(t, len(all.List), all.Next)
	page := listAgentGroups(t, "?offset=1&limit=2")
	assert.Equal(t, groupIDs(all)[1:3], groupIDs(page))
	assert.Equal(t, 3, page.Next)
	assert.Equal(t, all.Total, page.Total)
	def := listAgentGroups(t, "")
	assert.Equal(t, groupIDs(all)[:min(50, all.Total)], groupIDs(def), "default offset 0, limit 50")

	for query, field := range map[string]string{
		"?agentId=0":   "agentId",
		"?agentId=-3":  "agentId",
		"?agentId=abc": "agentId",
		"?limit=0":     "limit",
		"?limit=101":   "limit",
		"?offset=-1":   "offset",
	} {
		r := stack.Call(t, http.MethodGet, "/v2/agent-group/"+query, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, query)
		assert.Contains(t, r.Errors(t), field, query)
	}
}

func TestAgentGroupDemoData(t *testing.T) {
	var sales *agentGroupData
	for _, g := range listAgentGroups(t, "?limit=100").List {
		if g.Names["gb"] == "Sales" {
			sales = &g
			break
		}
	}
	require.NotNil(t, sales, "user-admin seed makes the Sales group")
	assert.Equal(t, "Продажи", sales.Names["ru"])
	require.NotEmpty(t, sales.AgentIDs)
	for _, id := range sales.AgentIDs {
		r := stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/user/detail/%d/", id), nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Contains(t, []any{"call-center", "call-center-senior"}, r.Data(t)["accessGroup"])
	}
	// The filter by one of its agents finds it.
	p := listAgentGroups(t, "?agentId="+strconv.FormatInt(sales.AgentIDs[0], 10))
	found := false
	for _, g := range p.List {
		found = found || g.ID == sales.ID
	}
	assert.True(t, found)
}

func TestOrderAgentGroupsAreCheckedWithTheUserService(t *testing.T) {
	agent := insertUsers(t, e2eUser{email: uniqueEmail("ag.order"), group: "call-center", active: true})[0]
	group := createAgentGroup(t, map[string]any{"names": map[string]any{"ru": "Заказы", "gb": "Orders"}, "agentIds": []int64{agent}})

	body := minimalOrder("Agent groups check")
	body["agentGroupIds"] = []int64{group, 987654321, 987654322}
	r := stack.Call(t, http.MethodPost, "/v2/order/create/", body)
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.False(t, r.Env.Success)
	assert.Equal(t, "unknown agent group ids: 987654321, 987654322", r.Errors(t)["agentGroupIds"])

	body["agentGroupIds"] = []int64{group}
	id := createOrder(t, body)
	assert.Equal(t, []any{float64(group)}, orderDetail(t, id)["agentGroupIds"])

	path := "/v2/order/update/" + strconv.FormatInt(id, 10) + "/"
	r = stack.Call(t, http.MethodPost, path, map[string]any{"agentGroupIds": []int64{987654321}})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, "unknown agent group ids: 987654321", r.Errors(t)["agentGroupIds"])
	assert.Equal(t, []any{float64(group)}, orderDetail(t, id)["agentGroupIds"], "a refused update changes nothing")

	other := createAgentGroup(t, map[string]any{"names": map[string]any{"ru": "Заказы 2", "gb": "Orders 2"}, "agentIds": []int64{}})
	r = stack.Call(t, http.MethodPost, path, map[string]any{"agentGroupIds": []int64{other, group}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, []any{float64(other), float64(group)}, orderDetail(t, id)["agentGroupIds"])

	r = stack.Call(t, http.MethodPost, path, map[string]any{"agentGroupIds": []int64{}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, []any{}, orderDetail(t, id)["agentGroupIds"])
}

// The notification service resolves recipients through the user service's internal route, which
// the gateway never exposes.
func TestUserRecipientsRoute(t *testing.T) {
	for _, path := range []string{"/internal/users/recipients", "/internal/agent-groups/check"} {
		r := stack.Call(t, http.MethodPost, path, map[string]any{"all": true})
		assert.Equal(t, http.StatusNotFound, r.Status, path)
	}

	recipients := func(t *testing.T, body string) (int, []map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, stack.URL("user")+"/internal/users/recipients", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Internal-Token", internalToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var env struct {
			Success bool            `json:"success"`
			Data    json.RawMessage `json:"data"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		if !env.Success {
			return resp.StatusCode, nil
		}
		var d struct {
			List []map[string]any `json:"list"`
		}
		require.NoError(t, json.Unmarshal(env.Data, &d))
		return resp.StatusCode, d.List
	}
	ids := insertUsers(t,
		e2eUser{email: uniqueEmail("rcpt.active"), group: "arbitration", active: true},
		e2eUser{email: uniqueEmail("rcpt.gone"), group: "arbitration", active: false},
	)
	code, list := recipients(t, `{"group":"arbitration"}`)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, idsOf(list), ids[0])
	assert.NotContains(t, idsOf(list), ids[1], "only active users")
	for _, u := range list {
		assert.Equal(t, "arbitration", u["accessGroup"])
		assert.Contains(t, u, "emailNotificationsEnabled")
		assert.Contains(t, u, "messengerNotificationsPriority")
	}
	code, list = recipients(t, `{"all":true}`)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, listUsers(t, "/v2/user/list/?isActive=1&limit=100").Total, len(list))
	code, list = recipients(t, fmt.Sprintf(`{"userId":%d}`, ids[1]))
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, []int64{ids[1]}, idsOf(list))
	code, _ = recipients(t, `{"userId":987654321}`)
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = recipients(t, `{"group":"root"}`)
	assert.Equal(t, http.StatusBadRequest, code)
}

// An API key is shown once: the create retried with its Idempotency-Key answers the same key's id
// and fields without the key, says it cannot be shown again, and makes no second key.
func TestAReplayedKeyCreateDoesNotShowTheKeyAgain(t *testing.T) {
	m := newMember(t, "client.replay@keys.e2e", "client")
	body := map[string]any{"name": "crm", "scopes": []string{"leads:read"}}
	first := stack.Call(t, http.MethodPost, "/v2/api-key/create/", body, WithKey(m.key), WithHeader("Idempotency-Key", "replay-1"))
	require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
	key, _ := first.Data(t)["key"].(string)
	require.NotEmpty(t, key)

	again := stack.Call(t, http.MethodPost, "/v2/api-key/create/", body, WithKey(m.key), WithHeader("Idempotency-Key", "replay-1"))
	require.Equal(t, http.StatusOK, again.Status, "%s", again.Body)
	assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	assert.NotContains(t, string(again.Body), key)
	assert.NotContains(t, again.Data(t), "key")
	assert.Equal(t, first.Data(t)["id"], again.Data(t)["id"])
	assert.Equal(t, "crm", again.Data(t)["name"])
	assert.Contains(t, again.Env.Message, "cannot be shown again")

	r := stack.Call(t, http.MethodGet, "/v2/api-key/", nil, WithKey(m.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.EqualValues(t, 2, r.Data(t)["total"], "the member's own key and one more, made once")
	assert.Equal(t, http.StatusOK, stack.Call(t, http.MethodGet, "/v2/lead/", nil, WithKey(key)).Status, "the key shown once works")
}
