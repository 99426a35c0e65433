package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The function-level access rules (gateway/README.md, "Who may do what"), written out by hand here
// rather than read from the gateway's table, so that a change of the table that nobody meant shows.
// Letters name the groups allowed: A admin, M moderator, C client, S call-center-senior,
// G call-center (agent), R arbitration, N none (a user without a group).

// demoUsers are the demo users that stand for each group.
var demoUsers = map[byte]string{
	'A': "admin@demo.callcenter.local",
	'M': "moderator@demo.callcenter.local",
	'C': "client@demo.callcenter.local",
	'S': "senior@demo.callcenter.local",
	'G': "agent.petrov@demo.callcenter.local",
	'R': "arbitration@demo.callcenter.local",
	'N': "newcomer@demo.callcenter.local",
}

const allGroups = "AMCSGRN"

// matrixRoute is one route of the matrix: who may call it, the scope a narrowed key needs (""
// none, "full" a key without scopes), a body that would be accepted (sent where the call must be
// refused, to show that even a good request writes nothing) and one that is refused for its
// content (sent where the call is allowed, so the matrix itself changes no data).
type matrixRoute struct {
	method, path string
	allowed      string
	scope        string
	valid        string
	invalid      string
}

func createdKey(t *testing.T, args ...string) string {
	t.Helper()
	out, err := stack.UserAdmin(append([]string{"apikey", "create"}, args...)...)
	require.NoError(t, err)
	return strings.TrimSpace(out)
}

func TestAccessMatrix(t *testing.T) {
	keys := map[byte]string{}
	for g, email := range demoUsers {
		keys[g] = createdKey(t, "--email", email, "--name", "matrix")
	}
	users := map[string]int64{}
	out, err := stack.UserAdmin("user", "list")
	require.NoError(t, err)
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			if id, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				users[f[1]] = id
			}
		}
	}
	orderID, code := leadOrder(t, "Matrix order")
	leadID := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
	r := stack.Call(t, http.MethodPost, "/v2/agent-group/create/", map[string]any{"names": map[string]any{"ru": "М", "gb": "M"}, "agentIds": []int64{}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	groupID := int64(r.Data(t)["id"].(float64))
	order, lead, group := strconv.FormatInt(orderID, 10), strconv.FormatInt(leadID, 10), strconv.FormatInt(groupID, 10)
	admin := strconv.FormatInt(users[demoUsers['A']], 10)
	note := `"title":"t","text":"t","priority":"default","level":"default"`

	routes := []matrixRoute{
		{"POST", "/v2/order/create/", "AMC", "orders:write", `{"serviceTitle":"s","title":"Matrix refused","status":"success","sipEndpointIds":[1]}`, `{}`},
		{"POST", "/v2/order/update/" + order + "/", "AMC", "orders:write", `{"title":"Matrix renamed"}`, `{"title":5}`},
		{"GET", "/v2/order/detail/" + order + "/", "AMCSGR", "orders:read", "", ""},
		{"POST", "/v2/call-attempt/create/", "AMS", "orders:write", `{"title":"Matrix","intervals":[5]}`, `{}`},
		{"POST", "/v2/lead/create/", "AMCSG", "leads:write", fmt.Sprintf(`{"leadType":"straight","phone":%q,"orderId":%d,"orderCode":%q}`, newPhone(), orderID, code), `{}`},
		{"POST", "/v2/lead/create-async/", "AMCSG", "leads:write", fmt.Sprintf(`{"leadType":"straight","phone":%q,"orderId":%d,"orderCode":%q}`, newPhone(), orderID, code), `{}`},
		{"POST", "/v2/lead/update/" + lead + "/", "AMCSGR", "leads:write", `{"name":"Matrix"}`, `{"name":5}`},
		{"GET", "/v2/lead/", "AMCSGR", "leads:read", "", ""},
		{"GET", "/v2/lead/detail/" + lead + "/", "AMCSGR", "leads:read", "", ""},
		{"GET", "/v2/lead/job/00000000-0000-8000-8000-000000000000/", "AMCSGR", "leads:read", "", ""},
		{"POST", "/v1/lead/create/", "AMCSG", "leads:write", fmt.Sprintf(`{"lead_type":"straight","client_phone":%q,"order_id":%d,"order_code":%q,"messengerId":1,"socialNetworkId":"1","socialLogin":"m"}`, newPhone(), orderID, code), `{}`},
		{"POST", "/v1/lead/create-async/", "AMCSG", "leads:write", fmt.Sprintf(`{"lead_type":"straight","client_phone":%q,"order_id":%d,"order_code":%q,"messengerId":1,"socialNetworkId":"1","socialLogin":"m"}`, newPhone(), orderID, code), `{}`},
		{"POST", "/v1/lead/update/" + lead + "/", "AMCSGR", "leads:write", `{"client_name":"Matrix"}`, `{"client_name":5}`},
		{"POST", "/v2/dialer/lease/", "AMC", "leads:write", `{"orderId":` + order + `,"limit":1,"dialerId":"matrix"}`, `{"orderId":` + order + `,"limit":0,"dialerId":"matrix"}`},
		{"POST", "/v2/dialer/release/", "AMC", "leads:write", `{"leaseId":"00000000-0000-4000-8000-000000000000"}`, `{"leaseId":"x"}`},
		{"POST", "/v2/dialer/extend/", "AMC", "leads:write", `{"leaseId":"00000000-0000-4000-8000-000000000000"}`, `{"leaseId":"x"}`},
		{"GET", "/v2/dialer/pace/" + order + "/", "AMC", "leads:read", "", ""},
		{"GET", "/v2/dialer/explain/" + order + "/", "AMC", "leads:read", "", ""},
		{"POST", "/v2/dnc/create/", "AMC", "dnc:write", fmt.Sprintf(`{"phones":[%q],"orderId":%d}`, newPhone(), orderID), fmt.Sprintf(`{"phones":["12"],"orderId":%d}`, orderID)},
		{"POST", "/v2/dnc/delete/", "AMC", "dnc:write", fmt.Sprintf(`{"phones":[%q],"orderId":%d}`, newPhone(), orderID), `{"phones":[]}`},
		{"GET", "/v2/dnc/?orderId=" + order, "AMC", "dnc:write", "", ""},
		{"GET", "/v2/dnc/check/?phone=%2B79161234567", "AMC", "dnc:write", "", ""},
		{"GET", "/v2/call/?orderIds[]=" + order, "AMCSGR", "calls:read", "", ""},
		{"GET", "/v2/call/detail/999999999/", "AMCSGR", "calls:read", "", ""},
		{"GET", "/v2/user/list/", "AMCSG", "users:read", "", ""},
		{"GET", "/v2/user/", "AMCSG", "users:read", "", ""},
		{"GET", "/v2/user/detail/" + admin + "/", "AMCSG", "users:read", "", ""},
		{"POST", "/v2/agent-group/create/", "AMS", "agent-groups:write", `{"names":{"ru":"М","gb":"M"},"agentIds":[]}`, `{}`},
		{"POST", "/v2/agent-group/update/" + group + "/", "AMS", "agent-groups:write", `{"names":{"ru":"Н","gb":"N"}}`, `{"names":5}`},
		{"GET", "/v2/agent-group/", "AMSG", "users:read", "", ""},
		{"POST", "/v2/api-key/create/", "AMCSGR", "full", `{"name":"matrix refused"}`, `{"name":5}`},
		{"GET", "/v2/api-key/", "AMCSGR", "full", "", ""},
		{"POST", "/v2/api-key/revoke/999999999/", "AMCSGR", "full", `{}`, `{}`},
		{"POST", "/v2/notification/private/", "AMS", "notifications:send", `{"userId":` + admin + `,` + note + `}`, `{}`},
		{"POST", "/v2/notification/public/", "AM", "notifications:send", `{` + note + `}`, `{}`},
		{"POST", "/v2/notification/group/", "AMS", "notifications:send", `{"group":"admin",` + note + `}`, `{}`},
		{"GET", "/v2/notification/", allGroups, "", "", ""},
		{"GET", "/v2/notification/stream/", allGroups, "", "", ""},
		{"POST", "/v2/notification/read/999999999/", allGroups, "", `{}`, `{}`},
		{"POST", "/v2/webhook/create/", "AMC", "webhooks:write", `{"url":"http://127.0.0.1:9/matrix","events":["lead.created"]}`, `{}`},
		{"POST", "/v2/webhook/update/999999999/", "AMC", "webhooks:write", `{"enabled":false}`, `{"url":5}`},
		{"POST", "/v2/webhook/delete/999999999/", "AMC", "webhooks:write", `{}`, `{}`},
		{"POST", "/v2/webhook/rotate-secret/999999999/", "AMC", "webhooks:write", `{}`, `{}`},
		{"GET", "/v2/webhook/", "AMC", "webhooks:write", "", ""},
		{"GET", "/v2/webhook/detail/999999999/", "AMC", "webhooks:write", "", ""},
		{"GET", "/v2/webhook/999999999/deliveries/", "AMC", "webhooks:write", "", ""},
		{"POST", "/v2/webhook/999999999/redeliver/matrix-event/", "AMC", "webhooks:write", `{}`, `{}`},
		{"GET", "/v2/report/orders/?from=2026-11-01&to=2026-11-02&interval=day", "AMCS", "calls:read", "", ""},
		{"GET", "/v2/report/agents/?from=2026-11-01&to=2026-11-02&interval=day", "AMCSG", "calls:read", "", ""},
		{"GET", "/v2/report/live/", "AMCSG", "calls:read", "", ""},
		{"GET", "/v1/health/check/", allGroups, "", "", ""},
	}

	// A key narrowed to one scope per scope: an admin's, so only the scope decides.
	scoped := map[string]string{}
	for _, scope := range []string{"orders:read", "orders:write", "leads:read", "leads:write", "calls:read", "users:read",
		"agent-groups:write", "notifications:send", "dnc:write", "webhooks:write"} {
		scoped[scope] = createdKey(t, "--email", demoUsers['A'], "--name", "matrix "+scope, "--scopes", scope)
	}

	before := quietCounts(t)
	for _, rt := range routes {
		for i := range len(allGroups) {
			g := allGroups[i]
			allowed := strings.IndexByte(rt.allowed, g) >= 0
			name := fmt.Sprintf("%s %s as %c", rt.method, rt.path, g)
			status := matrixCall(t, rt, keys[g], !allowed)
			if allowed {
				assert.NotContains(t, []int{http.StatusForbidden, http.StatusUnauthorized}, status, name)
				if !strings.HasPrefix(rt.path, "/v1/health/") {
					assert.Less(t, status, 500, name)
				}
			} else {
				assert.Equal(t, http.StatusForbidden, status, name)
			}
		}
	}

	for scope, key := range scoped {
		for _, rt := range routes {
			allowed := rt.scope == "" || rt.scope == scope
			name := fmt.Sprintf("%s %s with a %s key", rt.method, rt.path, scope)
			status := matrixCall(t, rt, key, !allowed)
			if allowed {
				assert.NotContains(t, []int{http.StatusForbidden, http.StatusUnauthorized}, status, name)
			} else {
				assert.Equal(t, http.StatusForbidden, status, name)
			}
		}
	}
	after := quietCounts(t)
	// Every refused call, sent with a body that would have been accepted, wrote nothing (and the
	// allowed ones were sent bodies refused for their content).
	assert.Equal(t, before, after, "a refused call wrote something")
}

// matrixCall sends rt with key (the accepted body when refuse, else the refused one) and returns
// the status. An event stream is cut once its status line is in.
func matrixCall(t *testing.T, rt matrixRoute, key string, refuse bool) int {
	t.Helper()
	if strings.HasSuffix(rt.path, "/stream/") || rt.path == "/v2/report/live/" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, rt.method, stack.BaseURL+rt.path, nil)
		require.NoError(t, err)
		req.Header.Set("X-Api-Key", key)
		resp, err := stack.Do(t, req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	body := rt.invalid
	if refuse {
		body = rt.valid
	}
	var b any
	if rt.method == http.MethodPost {
		b = body
	}
	return stack.Call(t, rt.method, rt.path, b, WithKey(key)).Status
}
