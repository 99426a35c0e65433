package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"ccplatform/clients/go/ccapi"
)

// The operations on webhooks, delivered to a receiver in this process.

// receiver is the partner's endpoint the mix's webhooks deliver to: it takes every delivery.
type receiver struct {
	srv       *httptest.Server
	delivered atomic.Int64
}

func newReceiver() *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/hooks/soak" }

func (r *receiver) close() { r.srv.Close() }

// hookInput is a subscription to the lead creates of the mix's webhook order: a sixth of the lead
// creates, so that deliveries run all along without outweighing the rest.
func (m *mix) hookInput(description string) ccapi.WebhookInput {
	return ccapi.WebhookInput{
		Url: ptr(m.receiver.url()), Events: &[]ccapi.WebhookEventType{ccapi.EventLeadCreated},
		OrderIds: &[]int{m.leadOrders[1].id}, Description: ptr(description),
	}
}

// hook is one of the webhooks made at setup, which are never deleted: the requests that name a
// webhook cannot meet one the mix is deleting.
func (m *mix) hook() int { return m.hooks[rand.IntN(len(m.hooks))] }

func (m *mix) webhookCreate(ctx context.Context) {
	body := m.hookInput(fmt.Sprintf("soak spare %d", m.n()))
	if r, ok := measure(m, "createWebhook", "", success, func() (*ccapi.CreateWebhookResponse, error) {
		return m.api.CreateWebhookWithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.spareHooks.push(r.JSON200.Data.Id)
	}
}

// webhookDelete deletes the oldest webhook the mix made but the newest.
func (m *mix) webhookDelete(ctx context.Context) {
	id, ok := m.spareHooks.pop(1)
	if !ok {
		return
	}
	measure(m, "deleteWebhook", "", success, func() (*ccapi.DeleteWebhookResponse, error) {
		return m.api.DeleteWebhookWithResponse(ctx, id)
	})
}

func (m *mix) webhookUpdate(ctx context.Context) {
	body := ccapi.WebhookInput{Description: ptr(fmt.Sprintf("soak %d", m.n()))}
	measure(m, "updateWebhook", "", success, func() (*ccapi.UpdateWebhookResponse, error) {
		return m.api.UpdateWebhookWithResponse(ctx, m.hook(), body)
	})
}

func (m *mix) webhookRotate(ctx context.Context) {
	measure(m, "rotateWebhookSecret", "", success, func() (*ccapi.RotateWebhookSecretResponse, error) {
		return m.api.RotateWebhookSecretWithResponse(ctx, m.hook())
	})
}

func (m *mix) webhookList(ctx context.Context) {
	measure(m, "listWebhooks", "", success, func() (*ccapi.ListWebhooksResponse, error) {
		return m.api.ListWebhooksWithResponse(ctx, &ccapi.ListWebhooksParams{Limit: ptr(20)})
	})
}

func (m *mix) webhookDetail(ctx context.Context) {
	measure(m, "getWebhook", "", success, func() (*ccapi.GetWebhookResponse, error) {
		return m.api.GetWebhookWithResponse(ctx, m.hook())
	})
}

// webhookDeliveries reads a webhook's delivery log and keeps its events for redelivery.
func (m *mix) webhookDeliveries(ctx context.Context) {
	id := m.hook()
	if r, ok := measure(m, "listWebhookDeliveries", "", success, func() (*ccapi.ListWebhookDeliveriesResponse, error) {
		return m.api.ListWebhookDeliveriesWithResponse(ctx, id, &ccapi.ListWebhookDeliveriesParams{Limit: ptr(20)})
	}); ok && r.JSON200 != nil {
		for _, d := range r.JSON200.Data.List {
			m.events.add(hookEvent{id, d.EventId})
		}
	}
}

func (m *mix) webhookRedeliver(ctx context.Context) {
	e := m.events.pick()
	if e.event == "" {
		return
	}
	measure(m, "redeliverWebhookEvent", "", success, func() (*ccapi.RedeliverWebhookEventResponse, error) {
		return m.api.RedeliverWebhookEventWithResponse(ctx, e.webhook, e.event)
	})
}
