package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func as(id int64, group user.AccessGroup) map[string]string {
	h := authed()
	h["X-User-Id"] = strconv.FormatInt(id, 10)
	h["X-Access-Group"] = string(group)
	return h
}

type agentView struct {
	UserID      int64   `json:"userId"`
	State       string  `json:"state"`
	Since       *string `json:"since"`
	PauseReason *string `json:"pauseReason"`
}

func agentPage(t *testing.T, env envelope) []agentView {
	t.Helper()
	var page struct {
		List  []agentView `json:"list"`
		Total int         `json:"total"`
	}
	require.NoError(t, json.Unmarshal(env.Data, &page))
	assert.Len(t, page.List, page.Total)
	return page.List
}

func ids(list []agentView) []int64 {
	out := []int64{}
	for _, a := range list {
		out = append(out, a.UserID)
	}
	return out
}

func TestAgentsSetTheirOwnStateAndSeeWhatTheirRoleAllows(t *testing.T) {
	f := setup(t)
	stamp := time.Now().UnixNano()
	agent := f.newUser(t, fmt.Sprintf("a1-%d@example.com", stamp), user.GroupCallCenter)
	mate := f.newUser(t, fmt.Sprintf("a2-%d@example.com", stamp), user.GroupCallCenter)
	stranger := f.newUser(t, fmt.Sprintf("a3-%d@example.com", stamp), user.GroupCallCenter)
	senior := f.newUser(t, fmt.Sprintf("s-%d@example.com", stamp), user.GroupCallCenterSenior)
	admin := f.newUser(t, fmt.Sprintf("admin-%d@example.com", stamp), user.GroupAdmin)
	members := []int64{agent, mate, senior}
	_, err := agentgroup.NewStore(f.db).Create(context.Background(), agentgroup.Changes{NameRU: ptr("Группа"), NameGB: ptr("Team"), AgentIDs: &members})
	require.NoError(t, err)

	status, env := f.do(t, http.MethodPost, "/v2/agent/state", `{"state":"paused","pauseReason":"lunch"}`, as(agent, user.GroupCallCenter))
	require.Equal(t, http.StatusOK, status, env.Message)
	var v agentView
	require.NoError(t, json.Unmarshal(env.Data, &v))
	assert.Equal(t, agentView{UserID: agent, State: "paused", Since: v.Since, PauseReason: ptr("lunch")}, v)
	require.NotNil(t, v.Since)

	status, env = f.do(t, http.MethodPost, "/v2/agent/state", fmt.Sprintf(`{"state":"available","userId":%d}`, mate), as(agent, user.GroupCallCenter))
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, env.Message, "userId: an agent sets only its own state")
	status, _ = f.do(t, http.MethodPost, "/v2/agent/state", fmt.Sprintf(`{"state":"available","userId":%d}`, mate), as(admin, user.GroupAdmin))
	assert.Equal(t, http.StatusOK, status, "staff set another agent's state")
	status, _ = f.do(t, http.MethodPost, "/v2/agent/state", `{"state":"available","userId":987654321}`, as(admin, user.GroupAdmin))
	assert.Equal(t, http.StatusNotFound, status)

	for body, want := range map[string]string{
		`{"state":"on-call"}`:                         "state: must be one of available, paused, offline",
		`{"state":"available","pauseReason":"lunch"}`: "pauseReason: is allowed only with the state paused",
		`{"state":"paused","userId":0}`:               "userId: must be an integer > 0",
		`{"state":5}`:                                 "state",
	} {
		status, env := f.do(t, http.MethodPost, "/v2/agent/state", body, as(agent, user.GroupCallCenter))
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, env.Message, want, body)
	}

	_, env = f.do(t, http.MethodGet, "/v2/agent/state", "", as(agent, user.GroupCallCenter))
	assert.Equal(t, []int64{agent}, ids(agentPage(t, env)), "an agent sees itself")
	_, env = f.do(t, http.MethodGet, "/v2/agent/state", "", as(senior, user.GroupCallCenterSenior))
	assert.ElementsMatch(t, []int64{agent, mate, senior}, ids(agentPage(t, env)), "a senior its groups, not %d", stranger)
	_, env = f.do(t, http.MethodGet, fmt.Sprintf("/v2/agent/state?userIds[]=%d&userIds[]=%d&userIds[]=%d", agent, mate, stranger), "", as(admin, user.GroupAdmin))
	list := agentPage(t, env)
	assert.Equal(t, []int64{agent, mate, stranger}, ids(list), "staff everyone")
	assert.Equal(t, []string{"paused", "available", "offline"}, []string{list[0].State, list[1].State, list[2].State})
	_, env = f.do(t, http.MethodGet, fmt.Sprintf("/v2/agent/state?state=available&userIds[]=%d&userIds[]=%d", agent, mate), "", as(admin, user.GroupAdmin))
	assert.Equal(t, []int64{mate}, ids(agentPage(t, env)))
	status, env = f.do(t, http.MethodGet, "/v2/agent/state?state=asleep", "", as(admin, user.GroupAdmin))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, env.Message, "state: must be one of")

	status, env = f.do(t, http.MethodPost, "/internal/agents/eligible", fmt.Sprintf(`{"userIds":[%d],"agentGroupIds":[]}`, stranger), authed())
	require.Equal(t, http.StatusOK, status, env.Message)
	assert.Contains(t, string(env.Data), fmt.Sprintf(`"userId":%d`, stranger))
}

func ptr[T any](v T) *T { return &v }
