//go:build fault || cluster

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// killWebhookCreates is the stream of the webhook-dispatcher kill: sync creates, one lead.created
// each.
const killWebhookCreates = 600

// testWebhookDispatcherKill: sync creates while webhook-dispatcher is SIGKILLed and started again.
func testWebhookDispatcherKill(t *testing.T) {
	runWebhookScenario(t, stack, "webhook-dispatcher SIGKILL", 5, killAndStart("webhook-dispatcher"))
}

// runWebhookScenario sends killWebhookCreates sync creates through s while f hits mid-stream.
// Every create that answered 200 committed a lead.created (through the slot); every one must reach the
// subscribed endpoint, each lead under one event id. A fault may repeat the attempts it cut (their
// claims expire after WEBHOOK_CLAIM_FOR, then they are sent again): at least once, the receiver
// dedupes by Webhook-Id, and the repeats are counted apart. phones picks the scenario's numbers
// (killPhone); label names the fault in the accounting line.
func runWebhookScenario(t *testing.T, s *Stack, label string, phones int, f fault) {
	orderR := s.Call(t, http.MethodPost, "/v2/order/create/", minimalOrder("Fault "+label))
	require.Equal(t, http.StatusOK, orderR.Status, "%s", orderR.Body)
	orderID := int64(orderR.Data(t)["id"].(float64))
	code := s.Call(t, http.MethodGet, "/v2/order/detail/"+strconv.FormatInt(orderID, 10)+"/", nil).Data(t)["code"].(string)
	// A receiver that takes 50 ms per webhook, so that the fault finds attempts in flight.
	recv := newHookReceiver(t, 50*time.Millisecond)
	r := s.Call(t, http.MethodPost, "/v2/webhook/create/", map[string]any{
		"url": recv.URL + "/fault", "events": []string{"lead.created"}, "orderIds": []int64{orderID}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	sub := strconv.FormatInt(int64(r.Data(t)["id"].(float64)), 10)
	defer s.Call(t, http.MethodPost, "/v2/webhook/delete/"+sub+"/", nil)

	client := faultClient()
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 2*time.Minute)
	defer cancel()
	leads := make([]int64, killWebhookCreates)
	stream := midStream{total: killWebhookCreates, fault: f}
	err := stream.run(ctx, func(i int) error {
		raw, _ := json.Marshal(v2Lead(orderID, code, killPhone(phones, i)))
		status, data, err := post(ctx, client, s, "/v2/lead/create/", raw, "")
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("status %d: %s (%v)", status, data, err)
		}
		var d struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(data, &d); err != nil || d.ID == 0 {
			return fmt.Errorf("created without an id: %s", data)
		}
		leads[i] = d.ID
		return nil
	})
	require.NoError(t, err)

	var delivered, twice, received int
	for deadline := time.Now().Add(faultDrain); ; {
		delivered, twice, received = 0, 0, 0
		for _, id := range leads {
			hooks := recv.of(id)
			ids := map[string]bool{}
			for _, h := range hooks {
				ids[h.header.Get("Webhook-Id")] = true
			}
			received += len(hooks)
			if len(ids) > 0 {
				delivered++
			}
			if len(ids) > 1 {
				twice++
			}
		}
		if delivered == len(leads) || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	// The attempts the kill cut stay claimed until WEBHOOK_CLAIM_FOR passes, then are sent again:
	// wait until no delivery of the subscription is pending, and count what the receiver got then.
	pending := -1
	for deadline := time.Now().Add(faultDrain); pending != 0 && time.Now().Before(deadline); {
		r := s.Call(t, http.MethodGet, "/v2/webhook/"+sub+"/deliveries/?state=pending&limit=1", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		pending = int(r.Data(t)["total"].(float64))
		if pending != 0 {
			time.Sleep(250 * time.Millisecond)
		}
	}
	require.Zero(t, pending, "deliveries still pending after the drain")
	received = 0
	for _, id := range leads {
		received += len(recv.of(id))
	}
	line := fmt.Sprintf("%s: accepted=%d created=%d lost=%d duplicated=%d",
		label, len(leads), delivered, len(leads)-delivered, twice)
	fmt.Println(line)
	fmt.Printf("%s repeats: received=%d for %d events (at least once: %d repeats of an event id, deduped by Webhook-Id)\n",
		label, received, delivered, received-delivered)
	if delivered != len(leads) || twice != 0 {
		t.Fatal(line)
	}
}
