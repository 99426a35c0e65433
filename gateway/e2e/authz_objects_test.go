package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
	out, err := stack.UserAdmin("user", "create", "--email", email, "--access-group", group)
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

// page reads a list answer as a caller.
func page(t *testing.T, key, path string) (total int, ids []int64) {
	t.Helper()
	r := stack.Call(t, http.MethodGet, path, nil, WithKey(key))
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
	d := r.Data(t)
	for _, it := range d["list"].([]any) {
		ids = append(ids, int64(it.(map[string]any)["id"].(float64)))
	}
	return int(d["total"].(float64)), ids
}

// Leads and calls follow their orders: each client's lists and totals hold only its own, the
// other's leads and calls answer like missing ones, a create in the other's order like a missing
// order, and nothing a refused call sends is written.
func TestLeadsAndCallsFollowTheirOrders(t *testing.T) {
	clientA := newMember(t, "client.a@leads.e2e", "client")
	clientB := newMember(t, "client.b@leads.e2e", "client")
	agentA := newMember(t, "agent.a@leads.e2e", "call-center")
	agentOther := newMember(t, "agent.other@leads.e2e", "call-center")
	arbiter := newMember(t, "arbiter@leads.e2e", "arbitration")

	orderBody := minimalOrder("Leads of A")
	orderBody["agentUserIds"] = []int64{agentA.id, agentOther.id}
	orderA := createOrder(t, orderBody, WithKey(clientA.key))
	orderB := createOrder(t, minimalOrder("Leads of B"), WithKey(clientB.key))
	codeA, codeB := orderDetail(t, orderA)["code"].(string), orderDetail(t, orderB)["code"].(string)
	leadA := createLead(t, "/v2/lead/create/", v2Lead(orderA, codeA, newPhone()), WithKey(clientA.key))
	leadB := createLead(t, "/v2/lead/create/", v2Lead(orderB, codeB, newPhone()), WithKey(clientB.key))
	a, b := strconv.FormatInt(orderA, 10), strconv.FormatInt(orderB, 10)

	// Lists and totals: only one's own, whatever the filter names.
	total, ids := page(t, clientA.key, "/v2/lead/?orderIds[]="+a+"&orderIds[]="+b)
	assert.Equal(t, 1, total)
	assert.Equal(t, []int64{leadA}, ids)
	total, _ = page(t, clientA.key, "/v2/lead/?orderIds[]="+b)
	assert.Zero(t, total, "a filter naming another's order matches nothing")
	total, ids = page(t, clientA.key, "/v2/lead/?limit=100")
	assert.Equal(t, 1, total)
	assert.Equal(t, []int64{leadA}, ids)

	before := rowCounts(t)
	missingLead := stack.Call(t, http.MethodGet, "/v2/lead/detail/999999999/", nil, WithKey(clientA.key))
	r := stack.Call(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(leadB, 10)+"/", nil, WithKey(clientA.key))
	assert.Equal(t, missingLead.Status, r.Status)
	assert.Equal(t, fmt.Sprintf("lead %d does not exist", leadB), r.Env.Message)
	r = stack.Call(t, http.MethodPost, "/v2/lead/update/"+strconv.FormatInt(leadB, 10)+"/", map[string]any{"name": "Taken"}, WithKey(clientA.key))
	assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	r = stack.Call(t, http.MethodPost, "/v1/lead/update/"+strconv.FormatInt(leadB, 10)+"/", map[string]any{"client_name": "Taken"}, WithKey(clientA.key))
	assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	for _, path := range []string{"/v2/lead/create/", "/v2/lead/create-async/"} {
		r = stack.Call(t, http.MethodPost, path, v2Lead(orderB, codeB, newPhone()), WithKey(clientA.key))
		assert.Equal(t, map[string]string{"orderId": "no order has id " + b}, r.Errors(t), path)
	}
	r = stack.Call(t, http.MethodPost, "/v1/lead/create/", v1Lead(orderB, codeB, newPhone()), WithKey(clientA.key))
	assert.Equal(t, map[string]string{"order_id": "no order has id " + b}, r.Errors(t))

	// An agent of order A reads its leads, with the phones masked (the order does not show lead
	// contacts to agents), but may not create any: the order does not allow it.
	total, ids = page(t, agentA.key, "/v2/lead/")
	assert.Equal(t, 1, total)
	assert.Equal(t, []int64{leadA}, ids)
	phone := leadDetail(t, leadA)["phone"].(string)
	masked := phone[:2] + strings.Repeat("*", len(phone)-4) + phone[len(phone)-2:]
	r = stack.Call(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(leadA, 10)+"/", nil, WithKey(agentA.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, masked, r.Data(t)["phone"], "an agent sees the country code and the last two digits")
	r = stack.Call(t, http.MethodGet, "/v2/lead/?orderIds[]="+a, nil, WithKey(agentA.key))
	assert.Contains(t, string(r.Body), masked)
	assert.NotContains(t, string(r.Body), phone)
	r = stack.Call(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(leadA, 10)+"/", nil, WithKey(clientA.key))
	assert.Equal(t, phone, r.Data(t)["phone"], "the order's client sees its leads' contacts")
	r = stack.Call(t, http.MethodPost, "/v2/lead/create/", v2Lead(orderA, codeA, newPhone()), WithKey(agentA.key))
	assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)

	// Arbitration settles a status, nothing else.
	r = stack.Call(t, http.MethodPost, "/v2/lead/update/"+strconv.FormatInt(leadA, 10)+"/", map[string]any{"name": "Arbitrated"}, WithKey(arbiter.key))
	assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Equal(t, before, rowCounts(t), "refused calls wrote nothing")

	// An async job is its creator's: to anyone else it does not exist.
	jobID := acceptJob(t, "/v2/lead/create-async/", v2Lead(orderA, codeA, newPhone()), WithKey(clientA.key))
	r = stack.Call(t, http.MethodGet, "/v2/lead/job/"+jobID+"/", nil, WithKey(clientA.key))
	assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	for name, key := range map[string]string{"another client": clientB.key, "an agent of the order": agentA.key, "the admin": stack.APIKey} {
		r = stack.Call(t, http.MethodGet, "/v2/lead/job/"+jobID+"/", nil, WithKey(key))
		assert.Equal(t, http.StatusNotFound, r.Status, name)
		assert.Equal(t, "job "+jobID+" does not exist", r.Env.Message, name)
	}
	waitJobAs(t, jobID, clientA.key)

	status := leadDetail(t, leadA)["statusId"]
	r = stack.Call(t, http.MethodPost, "/v2/lead/update/"+strconv.FormatInt(leadA, 10)+"/", map[string]any{"statusId": status}, WithKey(arbiter.key))
	assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	// Calls: a client sees those of its orders, an agent those they handled.
	platform := newTelephonyPlatform(t)
	started := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	platform.send(t, platformCall(leadA, orderA, agentA.id, "answered", "outgoing", started, time.Minute))
	platform.send(t, platformCall(leadA, orderA, agentOther.id, "answered", "outgoing", started.Add(time.Minute), time.Minute))
	platform.send(t, platformCall(leadB, orderB, agentOther.id, "answered", "outgoing", started, time.Minute))
	both := "/v2/call/?orderIds[]=" + a + "&orderIds[]=" + b
	all := waitForCalls(t, "orderIds[]="+a+"&orderIds[]="+b, 3)
	total, ids = page(t, clientA.key, both)
	assert.Equal(t, 2, total)
	total, mine := page(t, agentA.key, both)
	assert.Equal(t, 1, total, "an agent sees only the calls they handled")
	digits := fmt.Sprintf("7999%07d", leadA) // platformCall's client phone
	r = stack.Call(t, http.MethodGet, both, nil, WithKey(agentA.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	item := r.Data(t)["list"].([]any)[0].(map[string]any)
	assert.Equal(t, "7"+strings.Repeat("*", 8)+digits[len(digits)-2:], item["clientPhone"], "masked for the agent")
	r = stack.Call(t, http.MethodGet, both, nil, WithKey(clientA.key))
	assert.Contains(t, string(r.Body), digits, "not for the order's client")
	for _, id := range callIDs(all) {
		r := stack.Call(t, http.MethodGet, "/v2/call/detail/"+strconv.FormatInt(id, 10)+"/", nil, WithKey(clientB.key))
		inB := !slices.Contains(ids, id)
		assert.Equal(t, inB, r.Status == http.StatusOK, "call %d as client B: %d", id, r.Status)
		r = stack.Call(t, http.MethodGet, "/v2/call/detail/"+strconv.FormatInt(id, 10)+"/", nil, WithKey(agentA.key))
		assert.Equal(t, slices.Contains(mine, id), r.Status == http.StatusOK, "call %d as agent A: %d", id, r.Status)
	}

	// agentLeadEditMode: never (the default) refuses agents' updates; during-call lets an agent edit
	// within LEAD_EDIT_WINDOW (15 min) after their own call with the lead; always lets them.
	leadPath := "/v2/lead/update/" + strconv.FormatInt(leadA, 10) + "/"
	edit := func(m member) func() Response {
		return func() Response {
			return stack.Call(t, http.MethodPost, leadPath, map[string]any{"name": "Edited by an agent"}, WithKey(m.key))
		}
	}
	r = edit(agentA)()
	assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Contains(t, r.Env.Message, "agentLeadEditMode never")
	setMode := func(mode string) {
		r := stack.Call(t, http.MethodPost, "/v2/order/update/"+a+"/", map[string]any{"agentLeadEditMode": mode})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
	setMode("during-call")
	r = waitStatus(t, http.StatusForbidden, func() Response {
		r := edit(agentA)()
		if !strings.Contains(r.Env.Message, "during-call") {
			r.Status = 0 // the order's change has not reached lead-api yet
		}
		return r
	})
	assert.Contains(t, r.Env.Message, "within 15m0s after their own call", "their calls ended an hour ago")
	platform.send(t, platformCall(leadA, orderA, agentA.id, "answered", "outgoing", time.Now().Add(-2*time.Minute), 10*time.Second))
	waitStatus(t, http.StatusOK, edit(agentA))
	assert.Equal(t, http.StatusForbidden, edit(agentOther)().Status, "the other agent's call is an hour old")
	setMode("always")
	waitStatus(t, http.StatusOK, edit(agentOther))
}

// waitJobAs polls a job as its creator until it is no longer queued.
func waitJobAs(t *testing.T, jobID, key string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := stack.Call(t, http.MethodGet, "/v2/lead/job/"+jobID+"/", nil, WithKey(key))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		if r.Data(t)["status"] != "queued" {
			assert.Equal(t, "done", r.Data(t)["status"], "%s", r.Body)
			return
		}
		require.True(t, time.Now().Before(deadline), "job %s still queued", jobID)
		time.Sleep(50 * time.Millisecond)
	}
}
