package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// member is a user made for a test, with a key of their own.
type member struct {
	id  int64
	key string
}

func newMember(t *testing.T, email, group string) member {
	t.Helper()
	out, err := stack.Admin("user", "create", "--email", email, "--access-group", group)
	require.NoError(t, err)
	id, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	require.NoError(t, err, out)
	return member{id: id, key: createdKey(t, "--user", strconv.FormatInt(id, 10), "--name", "objects")}
}

// Objects belong to orders and orders to clients: another client's order answers exactly like a
// missing one, for reads and updates alike, and an agent sees the orders they or their agent
// groups work in.
func TestOrdersBelongToTheirClient(t *testing.T) {
	clientA := newMember(t, "client.a@objects.e2e", "client")
	clientB := newMember(t, "client.b@objects.e2e", "client")
	agentIn := newMember(t, "agent.in@objects.e2e", "call-center")
	agentByGroup := newMember(t, "agent.group@objects.e2e", "call-center-senior")
	agentOut := newMember(t, "agent.out@objects.e2e", "call-center")

	r := stack.Call(t, http.MethodPost, "/v2/agent-group/create/", map[string]any{
		"names": map[string]any{"ru": "Объекты", "gb": "Objects"}, "agentIds": []int64{agentByGroup.id}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	groupID := int64(r.Data(t)["id"].(float64))

	body := minimalOrder("Client A's order")
	body["clientUserId"] = clientB.id // a client's order is its own whatever it sends
	body["agentUserIds"] = []int64{agentIn.id}
	body["agentGroupIds"] = []int64{groupID}
	id := createOrder(t, body, WithKey(clientA.key))
	path := "/v2/order/detail/" + strconv.FormatInt(id, 10) + "/"
	assert.EqualValues(t, clientA.id, orderDetail(t, id)["clientUserId"])

	for name, m := range map[string]member{"owner": clientA, "agent of the order": agentIn, "agent of its group": agentByGroup} {
		r := stack.Call(t, http.MethodGet, path, nil, WithKey(m.key))
		assert.Equal(t, http.StatusOK, r.Status, "%s: %s", name, r.Body)
	}
	missing := stack.Call(t, http.MethodGet, "/v2/order/detail/999999999/", nil, WithKey(clientB.key))
	for name, m := range map[string]member{"another client": clientB, "an agent elsewhere": agentOut} {
		r := stack.Call(t, http.MethodGet, path, nil, WithKey(m.key))
		assert.Equal(t, missing.Status, r.Status, name)
		assert.Equal(t, fmt.Sprintf("order %d does not exist", id), r.Env.Message, name)
	}

	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(id, 10)+"/", map[string]any{"title": "Taken over"}, WithKey(clientB.key))
	assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	assert.Equal(t, "Client A's order", orderDetail(t, id)["title"], "a refused update changes nothing")

	// Staff give an order to a client: an active user of the client group only.
	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(id, 10)+"/", map[string]any{"clientUserId": agentIn.id})
	assertFieldError(t, r, "clientUserId")
	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(id, 10)+"/", map[string]any{"clientUserId": clientB.id})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, http.StatusOK, stack.Call(t, http.MethodGet, path, nil, WithKey(clientB.key)).Status)
	assert.Equal(t, http.StatusNotFound, stack.Call(t, http.MethodGet, path, nil, WithKey(clientA.key)).Status)
}
