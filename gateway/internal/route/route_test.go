package route

import (
	"strings"
	"testing"

	"ccplatform/pkg/access"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contractOperations are the 23 operations as the contract writes them, with the service that
// answers each.
var contractOperations = []struct {
	method, path string
	service      Service
}{
	{"POST", "/v2/order/create/", Order},
	{"POST", "/v2/order/update/{orderId}/", Order},
	{"GET", "/v2/order/detail/{orderId}/", Order},
	{"POST", "/v2/lead/create/", Lead},
	{"POST", "/v2/lead/create-async/", Lead},
	{"POST", "/v2/lead/update/{leadId}/", Lead},
	{"GET", "/v2/lead/", Lead},
	{"GET", "/v2/lead/detail/{leadId}/", Lead},
	{"POST", "/v1/lead/create/", Lead},
	{"POST", "/v1/lead/create-async/", Lead},
	{"POST", "/v1/lead/update/{lead_id}/", Lead},
	{"GET", "/v2/call/", Call},
	{"GET", "/v2/call/detail/{callId}/", Call},
	{"GET", "/v2/user/list/", User},
	{"GET", "/v2/user/detail/{userId}/", User},
	{"POST", "/v2/agent-group/create/", User},
	{"POST", "/v2/agent-group/update/{id}/", User},
	{"GET", "/v2/agent-group/", User},
	{"POST", "/v2/call-attempt/create/", Order},
	{"POST", "/v2/notification/private/", Notification},
	{"POST", "/v2/notification/public/", Notification},
	{"POST", "/v2/notification/group/", Notification},
	{"GET", "/v1/health/check/", Gateway},
}

// ginPattern turns the contract's `/a/{id}/` into the table's `/a/:id`.
func ginPattern(p string) string {
	p = strings.TrimSuffix(p, "/")
	p = strings.ReplaceAll(p, "{", ":")
	return strings.ReplaceAll(p, "}", "")
}

func TestTableHasEveryContractOperation(t *testing.T) {
	require.Len(t, contractOperations, 23)
	byKey := map[string]Route{}
	for _, r := range Table() {
		byKey[r.Method+" "+r.Path] = r
	}
	for _, op := range contractOperations {
		r, ok := byKey[op.method+" "+ginPattern(op.path)]
		if assert.True(t, ok, "%s %s missing", op.method, op.path) {
			assert.Equal(t, op.service, r.Service, "%s %s", op.method, op.path)
		}
	}
}

func TestTableExtras(t *testing.T) {
	byKey := map[string]Route{}
	for _, r := range Table() {
		byKey[r.Method+" "+r.Path] = r
	}
	alias := byKey["GET /v2/user"]
	assert.Equal(t, User, alias.Service)
	assert.Equal(t, "/v2/user/list", alias.UpstreamPath)
	assert.Equal(t, byKey["GET /v2/user/list"].Policy, alias.Policy, "the alias has its route's policy")
	assert.Equal(t, Lead, byKey["GET /v2/lead/job/:jobId"].Service)
	assert.Equal(t, Notification, byKey["GET /v2/notification"].Service)
	assert.True(t, byKey["GET /v2/notification/stream"].Stream)
	assert.Equal(t, Notification, byKey["POST /v2/notification/read/:id"].Service)
	for _, p := range []string{"POST /v2/api-key/create", "GET /v2/api-key", "POST /v2/api-key/revoke/:id"} {
		assert.Equal(t, User, byKey[p].Service, p)
		assert.True(t, byKey[p].Policy.FullKey, p)
	}
	for _, p := range []string{"GET /v2/dialer/pace/:orderId", "GET /v2/dialer/explain/:orderId"} {
		assert.Equal(t, access.LeadsRead, byKey[p].Policy.Scope, p)
		assert.Equal(t, byKey["POST /v2/dialer/lease"].Policy.Groups, byKey[p].Policy.Groups, p)
	}
	for _, p := range []string{"POST /v2/dialer/lease", "POST /v2/dialer/release", "POST /v2/dialer/extend",
		"GET /v2/dialer/pace/:orderId", "GET /v2/dialer/explain/:orderId",
		"POST /v2/dnc/create", "POST /v2/dnc/delete", "GET /v2/dnc", "GET /v2/dnc/check"} {
		assert.Equal(t, Lead, byKey[p].Service, p)
	}
	for _, p := range []string{"POST /v2/agent/state", "GET /v2/agent/state"} {
		assert.Equal(t, User, byKey[p].Service, p)
	}
	for _, p := range []string{"POST /v2/lead/import", "GET /v2/lead/import/:importId", "GET /v2/lead/import/:importId/rows"} {
		assert.Equal(t, Lead, byKey[p].Service, p)
	}
	assert.Equal(t, int64(64<<20), byKey["POST /v2/lead/import"].BodyLimit, "the import has its own body limit")
	for _, r := range Table() {
		if r.Method+" "+r.Path != "POST /v2/lead/import" {
			assert.Zero(t, r.BodyLimit, "%s %s keeps the common body limit", r.Method, r.Path)
		}
	}
	for _, p := range []string{"POST /v2/webhook/create", "POST /v2/webhook/update/:webhookId", "POST /v2/webhook/delete/:webhookId",
		"POST /v2/webhook/rotate-secret/:webhookId", "GET /v2/webhook", "GET /v2/webhook/detail/:webhookId",
		"GET /v2/webhook/:webhookId/deliveries", "POST /v2/webhook/:webhookId/redeliver/:eventId"} {
		assert.Equal(t, Webhook, byKey[p].Service, p)
		assert.Equal(t, access.WebhooksWrite, byKey[p].Policy.Scope, p)
	}
	assert.Equal(t, Report, byKey["GET /v2/report/orders"].Service)
	assert.Equal(t, access.CallsRead, byKey["GET /v2/report/orders"].Policy.Scope)
	assert.Equal(t, Report, byKey["GET /v2/report/agents"].Service)
	assert.Equal(t, access.CallsRead, byKey["GET /v2/report/agents"].Policy.Scope)
	assert.Equal(t, Report, byKey["GET /v2/report/live"].Service)
	assert.Equal(t, access.CallsRead, byKey["GET /v2/report/live"].Policy.Scope)
	assert.True(t, byKey["GET /v2/report/live"].Stream, "the live stream outlives the server's timeouts")
	assert.Len(t, Table(), 23+8+9+3+8+2+3)
}

// Every route names its groups; none is open to a group that does not exist.
func TestEveryRouteHasAPolicy(t *testing.T) {
	for _, r := range Table() {
		assert.NotEmpty(t, r.Policy.Groups, "%s %s", r.Method, r.Path)
		for _, g := range r.Policy.Groups {
			assert.True(t, g.Valid(), "%s %s: %q", r.Method, r.Path, g)
		}
	}
}

func TestTableIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Table() {
		key := r.Method + " " + r.Path
		assert.False(t, seen[key], "duplicate %s", key)
		seen[key] = true
		assert.False(t, strings.HasSuffix(r.Path, "/"), "%s has a trailing slash", key)
		assert.False(t, strings.HasPrefix(r.Path, "/internal"), "%s exposes an internal route", key)
		assert.Contains(t, []string{"GET", "POST"}, r.Method)
	}
}

func TestParseUpstreams(t *testing.T) {
	ups, err := ParseUpstreams(map[Service]string{
		User:  "http://127.0.0.1:8081/",
		Order: "http://127.0.0.1:8082",
		Lead:  "",
		Call:  "  ",
	})
	require.NoError(t, err)
	assert.Len(t, ups, 2)
	assert.Equal(t, "http://127.0.0.1:8081", ups[User].String())
	_, deployed := ups[Lead]
	assert.False(t, deployed)

	for _, bad := range []string{"127.0.0.1:8081", "ftp://x", "http://", "://x", "https://x", "http://u:p@x", "http://x?a=1", "http://x#f"} {
		_, err := ParseUpstreams(map[Service]string{User: bad})
		assert.Error(t, err, bad)
	}
}
