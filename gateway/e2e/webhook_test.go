package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hook is one webhook a receiver got.
type hook struct {
	header http.Header
	body   []byte
	event  struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			ID    int64  `json:"id"`
			Title string `json:"title"`
		} `json:"data"`
	}
}

// hookReceiver is a partner's endpoint: a real HTTP server that keeps every webhook.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []hook
}

// newHookReceiver starts a receiver that answers 204 after delay (none: at once).
func newHookReceiver(t *testing.T, delay ...time.Duration) *hookReceiver {
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, d := range delay {
			time.Sleep(d)
		}
		h := hook{header: req.Header.Clone()}
		h.body, _ = io.ReadAll(req.Body)
		_ = json.Unmarshal(h.body, &h.event)
		r.mu.Lock()
		r.got = append(r.got, h)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// of are the webhooks received about the resource id.
func (r *hookReceiver) of(id int64) []hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hook
	for _, h := range r.got {
		if h.event.Data.ID == id {
			out = append(out, h)
		}
	}
	return out
}

// A client's subscription gets its own orders' events, signed as the Standard Webhooks library
// verifies, and no other client's; the delivery log shows them and redelivery sends one again.
func TestWebhooksDeliverSignedEventsOfTheOwnersOrdersOnly(t *testing.T) {
	owner := newMember(t, "client.hooks@webhooks.e2e", "client")
	other := newMember(t, "client.other@webhooks.e2e", "client")
	recv := newHookReceiver(t)
	r := stack.Call(t, http.MethodPost, "/v2/webhook/create/", map[string]any{
		"url": recv.URL + "/hooks", "events": []string{"order.updated"}, "description": "e2e"}, WithKey(owner.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	sub := r.Data(t)
	subID := strconv.FormatInt(int64(sub["id"].(float64)), 10)
	defer func() {
		// Leave no subscription behind for the tests that count rows.
		r := stack.Call(t, http.MethodPost, "/v2/webhook/delete/"+subID+"/", nil, WithKey(owner.key))
		assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}()
	wh, err := standardwebhooks.NewWebhook(sub["secret"].(string))
	require.NoError(t, err)

	own := createOrder(t, minimalOrder("Hooked order"), WithKey(owner.key))
	others := createOrder(t, minimalOrder("Another client's order"), WithKey(other.key))
	for _, o := range []struct {
		id  int64
		key string
	}{{others, other.key}, {own, owner.key}} {
		r := stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(o.id, 10)+"/", map[string]any{"title": "Renamed"}, WithKey(o.key))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
	require.Eventually(t, func() bool { return len(recv.of(own)) == 1 }, 30*time.Second, 50*time.Millisecond, "the owner's order.updated")
	got := recv.of(own)[0]
	assert.NoError(t, wh.Verify(got.body, got.header), "signed with the subscription's secret, timestamp fresh")
	assert.Equal(t, "order.updated", got.event.Type)
	assert.Equal(t, "Renamed", got.event.Data.Title, "data is the order as the API returns it")
	assert.Equal(t, got.event.ID, got.header.Get("Webhook-Id"))
	// Both updates were published together; the other client's is never sent to this endpoint.
	time.Sleep(time.Second)
	assert.Empty(t, recv.of(others), "another client's order")

	// The log shows the delivery; another client does not see the subscription at all.
	r = stack.Call(t, http.MethodGet, "/v2/webhook/"+subID+"/deliveries/?state=delivered", nil, WithKey(owner.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var page struct {
		List []struct {
			EventID    string `json:"eventId"`
			State      string `json:"state"`
			Attempts   int    `json:"attempts"`
			AttemptLog []struct {
				StatusCode int `json:"statusCode"`
			} `json:"attemptLog"`
		} `json:"list"`
		Total int `json:"total"`
	}
	require.NoError(t, json.Unmarshal(r.Env.Data, &page))
	require.Equal(t, 1, page.Total)
	assert.Equal(t, got.event.ID, page.List[0].EventID)
	assert.Equal(t, 1, page.List[0].Attempts)
	require.Len(t, page.List[0].AttemptLog, 1)
	assert.Equal(t, http.StatusNoContent, page.List[0].AttemptLog[0].StatusCode)
	assert.Equal(t, http.StatusNotFound, stack.Call(t, http.MethodGet, "/v2/webhook/detail/"+subID+"/", nil, WithKey(other.key)).Status)
	assert.Equal(t, http.StatusForbidden, stack.Call(t, http.MethodGet, "/v2/webhook/", nil, WithKey(newMember(t, "agent@webhooks.e2e", "call-center").key)).Status)

	// Redelivery sends the same event (same Webhook-Id) again.
	r = stack.Call(t, http.MethodPost, "/v2/webhook/"+subID+"/redeliver/"+got.event.ID+"/", nil, WithKey(owner.key))
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	require.Eventually(t, func() bool { return len(recv.of(own)) == 2 }, 30*time.Second, 50*time.Millisecond, "the redelivery")
	assert.Equal(t, got.event.ID, recv.of(own)[1].header.Get("Webhook-Id"))
}

// A key narrowed to webhooks:write may not read leads, so it may not subscribe to lead events
// either (403 naming the event type and the scope); with the read scope of the events it may.
func TestAWebhookKeySubscribesOnlyToEventsItMayRead(t *testing.T) {
	m := newMember(t, "client.scoped@webhooks.e2e", "client")
	id := strconv.FormatInt(m.id, 10)
	hooksOnly := createdKey(t, "--user", id, "--name", "hooks only", "--scopes", "webhooks:write")
	assert.Equal(t, http.StatusForbidden, stack.Call(t, http.MethodGet, "/v2/lead/", nil, WithKey(hooksOnly)).Status)
	body := map[string]any{"url": "http://127.0.0.1:9/scoped", "events": []string{"lead.created"}}
	r := stack.Call(t, http.MethodPost, "/v2/webhook/create/", body, WithKey(hooksOnly))
	assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Contains(t, r.Env.Message, "lead.created needs leads:read")

	reading := createdKey(t, "--user", id, "--name", "hooks and leads", "--scopes", "webhooks:write,leads:read")
	r = stack.Call(t, http.MethodPost, "/v2/webhook/create/", body, WithKey(reading))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	subID := strconv.FormatInt(int64(r.Data(t)["id"].(float64)), 10)
	defer stack.Call(t, http.MethodPost, "/v2/webhook/delete/"+subID+"/", nil, WithKey(m.key))
	r = stack.Call(t, http.MethodPost, "/v2/webhook/update/"+subID+"/", map[string]any{"events": []string{"lead.created", "order.updated"}}, WithKey(reading))
	assert.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Contains(t, r.Env.Message, "order.updated needs orders:read")
}

// A deactivated owner's subscription gets no more events: an admin's subscription to the same
// events is the witness that the event was fanned out.
func TestADeactivatedOwnersWebhookGetsNoEvents(t *testing.T) {
	m := newMember(t, "client.leaving@webhooks.e2e", "client")
	mine := newHookReceiver(t)
	r := stack.Call(t, http.MethodPost, "/v2/webhook/create/", map[string]any{"url": mine.URL + "/hooks", "events": []string{"order.updated"}}, WithKey(m.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	subID := strconv.FormatInt(int64(r.Data(t)["id"].(float64)), 10)
	witness := newHookReceiver(t)
	r = stack.Call(t, http.MethodPost, "/v2/webhook/create/", map[string]any{"url": witness.URL + "/hooks", "events": []string{"order.updated"}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	witnessID := strconv.FormatInt(int64(r.Data(t)["id"].(float64)), 10)
	defer func() {
		for _, id := range []string{subID, witnessID} {
			r := stack.Call(t, http.MethodPost, "/v2/webhook/delete/"+id+"/", nil)
			assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		}
	}()
	order := createOrder(t, minimalOrder("Leaving client's order"), WithKey(m.key))

	_, err := stack.UserAdmin("user", "set-active", "--id", strconv.FormatInt(m.id, 10), "--active=false")
	require.NoError(t, err)
	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(order, 10)+"/", map[string]any{"title": "Renamed"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Eventually(t, func() bool { return len(witness.of(order)) == 1 }, 30*time.Second, 50*time.Millisecond, "the witness got the event")
	// One fan-out transaction records an event's deliveries to every subscription at once.
	r = stack.Call(t, http.MethodGet, "/v2/webhook/"+subID+"/deliveries/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.EqualValues(t, 0, r.Data(t)["total"], "nothing for the deactivated owner")
	assert.Empty(t, mine.of(order))
}
