package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A partner's first flow needs no pause anywhere: a client whose orders every service has already
// cached (it listed its leads, its webhook got an event) creates an order and at once creates a
// lead in it, imports a file into it, gets the lead.created webhook of a lead created at once; an
// agent who read leads before is assigned to the order and at once reads its leads. A cached scope
// that lacks the new order is asked again, never taken for "no order".
func TestAPartnersFirstFlowNeedsNoPause(t *testing.T) {
	client := newMember(t, "client@firstflow.e2e", "client")
	agent := newMember(t, "agent@firstflow.e2e", "call-center")
	recv := newHookReceiver(t)
	r := stack.Call(t, http.MethodPost, "/v2/webhook/create/", map[string]any{
		"url": recv.URL + "/hooks", "events": []string{"lead.created"}, "description": "first flow"}, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	subID := strconv.FormatInt(int64(r.Data(t)["id"].(float64)), 10)
	t.Cleanup(func() {
		// Leave no subscription behind for the tests that count rows.
		r := stack.Call(t, http.MethodPost, "/v2/webhook/delete/"+subID+"/", nil, WithKey(client.key))
		assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	})

	// Every service caches the client's orders, and the agent's (none).
	first := createOrder(t, minimalOrder("First flow, warm-up"), WithKey(client.key))
	warm := createLead(t, "/v2/lead/create/", v2Lead(first, orderDetail(t, first)["code"].(string), newPhone()), WithKey(client.key))
	require.Eventually(t, func() bool { return len(recv.of(warm)) == 1 }, 30*time.Second, 20*time.Millisecond, "the warm-up lead.created")
	total, _ := page(t, client.key, "/v2/lead/")
	require.Equal(t, 1, total)
	total, _ = page(t, agent.key, "/v2/lead/")
	require.Zero(t, total)

	// No pause from here on.
	order := createOrder(t, minimalOrder("First flow"), WithKey(client.key))
	code := orderDetail(t, order)["code"].(string)
	lead := createLead(t, "/v2/lead/create/", v2Lead(order, code, newPhone()), WithKey(client.key))
	r = stack.Call(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(lead, 10)+"/", nil, WithKey(client.key))
	assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	_, ids := page(t, client.key, "/v2/lead/?orderIds[]="+strconv.FormatInt(order, 10))
	assert.Equal(t, []int64{lead}, ids, "a list at once holds the new order's lead")

	file := "phone,leadType,name\n" + newPhone() + ",straight,Ann\n" + newPhone() + ",straight,Bob\n" + newPhone() + ",selection,Cy\n"
	imp := startImport(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", order, code), file, WithKey(client.key))

	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(order, 10)+"/", map[string]any{"agentUserIds": []int64{agent.id}}, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r = stack.Call(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(lead, 10)+"/", nil, WithKey(agent.key))
	assert.Equal(t, http.StatusOK, r.Status, "the agent assigned a moment ago reads the order's lead: %s", r.Body)
	_, ids = page(t, agent.key, "/v2/lead/")
	assert.Contains(t, ids, lead, "and lists it")

	v := waitImport(t, imp.ID, 30*time.Second, WithKey(client.key))
	assert.Equal(t, "done", v.State)
	assert.Equal(t, []int{3, 3, 3, 0}, []int{v.RowsTotal, v.RowsDone, v.RowsCreated, v.RowsRefused}, "every row created, none refused")

	require.Eventually(t, func() bool { return len(recv.of(lead)) == 1 }, 30*time.Second, 20*time.Millisecond,
		"the lead.created of the lead created at once is delivered")
	assert.Equal(t, "lead.created", recv.of(lead)[0].event.Type)
}

// refusedWithin polls path with key until the gateway answers 401 and returns how long that took
// from since.
func refusedWithin(t *testing.T, key, path string, since time.Time) time.Duration {
	t.Helper()
	for time.Since(since) < 10*time.Second {
		if r := stack.Call(t, http.MethodGet, path, nil, WithKey(key)); r.Status == http.StatusUnauthorized {
			return time.Since(since)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s still accepted 10s later", path)
	return 0
}

// revocationBound is the 1 s the gateway trusts a verified key, with room for the request that
// finds out on a loaded machine.
const revocationBound = time.Second + 300*time.Millisecond

// A revoked key is refused within 1 s, and an expiring key from its expiresAt (the stack runs the
// gateway with its default AUTH_CACHE_TTL).
func TestRevokedAndExpiredKeysStopWithinASecond(t *testing.T) {
	owner := newMember(t, "owner@keys-stop.e2e", "client")
	r := stack.Call(t, http.MethodPost, "/v2/api-key/create/", map[string]any{"name": "to revoke"}, WithKey(owner.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var k struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	require.NoError(t, json.Unmarshal(r.Env.Data, &k))
	require.Equal(t, http.StatusOK, stack.Call(t, http.MethodGet, "/v2/lead/", nil, WithKey(k.Key)).Status, "verified, and cached")
	r = stack.Call(t, http.MethodPost, "/v2/api-key/revoke/"+strconv.FormatInt(k.ID, 10)+"/", nil, WithKey(owner.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	took := refusedWithin(t, k.Key, "/v2/lead/", time.Now())
	assert.Less(t, took, revocationBound, "a revoked key is refused within 1 s (took %s)", took)

	// Verified at once and again every second, the key would stay cached about half a second past
	// its expiry if the cache did not know it.
	expiresAt := time.Now().Add(1500 * time.Millisecond)
	r = stack.Call(t, http.MethodPost, "/v2/api-key/create/", map[string]any{"name": "expiring", "expiresAt": expiresAt.UTC().Format(time.RFC3339Nano)}, WithKey(owner.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.NoError(t, json.Unmarshal(r.Env.Data, &k))
	for time.Until(expiresAt) > 50*time.Millisecond {
		require.Equal(t, http.StatusOK, stack.Call(t, http.MethodGet, "/v2/lead/", nil, WithKey(k.Key)).Status, "works until its expiry")
		time.Sleep(20 * time.Millisecond)
	}
	took = refusedWithin(t, k.Key, "/v2/lead/", expiresAt)
	assert.Less(t, took, 250*time.Millisecond, "an expired key is refused from its expiresAt, not a cache TTL later (took %s)", took)
}

// A senior agent taken off an order stops seeing its calls within 1 s.
func TestASeniorRemovedFromAnOrderStopsSeeingItsCalls(t *testing.T) {
	senior := newMember(t, "senior@removed.e2e", "call-center-senior")
	body := minimalOrder("Removal")
	body["agentUserIds"] = []int64{senior.id}
	order := createOrder(t, body)
	lead := createLead(t, "/v2/lead/create/", v2Lead(order, orderDetail(t, order)["code"].(string), newPhone()))
	newTelephonyPlatform(t).send(t, platformCall(lead, order, senior.id, "answered", "outgoing", time.Now().Add(-time.Hour).UTC().Truncate(time.Second), time.Minute))
	calls := waitForCalls(t, "orderIds[]="+strconv.FormatInt(order, 10), 1)
	path := "/v2/call/detail/" + strconv.FormatInt(int64(calls.List[0]["id"].(float64)), 10) + "/"
	require.Equal(t, http.StatusOK, stack.Call(t, http.MethodGet, path, nil, WithKey(senior.key)).Status, "seen, and cached")

	r := stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(order, 10)+"/", map[string]any{"agentUserIds": []int64{}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	removed := time.Now()
	total, _ := page(t, senior.key, "/v2/call/?orderIds[]="+strconv.FormatInt(order, 10))
	assert.Zero(t, total, "a list asks afresh")
	for stack.Call(t, http.MethodGet, path, nil, WithKey(senior.key)).Status == http.StatusOK {
		require.Less(t, time.Since(removed), 10*time.Second, "still seen")
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(removed)
	assert.Less(t, took, revocationBound, "the call is hidden within 1 s (took %s)", took)
	assert.Equal(t, http.StatusNotFound, stack.Call(t, http.MethodGet, path, nil, WithKey(senior.key)).Status)
}
