package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"

	"ccplatform/clients/go/ccapi"
	"ccplatform/gateway/e2e/loadtest"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// ops is the mix: every operation of the public API (uncovered checks it against the description),
// weighted like a partner's traffic: reads first, then lead creates. About 5 % of the requests are
// bad input on purpose (badinput.go), each of which must be refused with a 4xx.
var ops = []op{
	{"createOrder", "", 2, (*mix).orderCreate},
	{"updateOrder", "", 3, (*mix).orderUpdate},
	{"getOrder", "", 6, (*mix).orderDetail},
	{"createCallAttemptGroup", "", 0.5, (*mix).callAttemptCreate},
	{"createLead", "", 8, (*mix).leadCreateV2},
	{"createLeadV1", "", 4, (*mix).leadCreateV1},
	{"createLeadAsync", "", 5, (*mix).leadCreateAsyncV2},
	{"createLeadAsyncV1", "", 2, (*mix).leadCreateAsyncV1},
	{"getLeadJob", "", 6, (*mix).leadJob},
	{"listLeads", "", 6, (*mix).leadList},
	{"getLead", "", 10, (*mix).leadDetail},
	{"updateLead", "", 5, (*mix).leadUpdateV2},
	{"updateLeadV1", "", 2, (*mix).leadUpdateV1},
	{"importLeads", "", 0.2, (*mix).importCSV},
	{"importLeads", "", 0.2, (*mix).importNDJSON},
	{"getLeadImport", "", 1, (*mix).importDetail},
	{"listLeadImportRows", "", 1, (*mix).importRows},
	{"leaseLeads", "", 1, (*mix).lease},
	{"leaseLeads", "", 0.5, (*mix).pacedLease},
	{"getDialerPace", "", 0.5, (*mix).dialerPace},
	{"explainDialer", "", 0.5, (*mix).dialerExplain},
	{"extendLease", "", 0.5, (*mix).extendLease},
	{"releaseLeads", "", 0.7, (*mix).release},
	{"createDncEntries", "", 0.5, (*mix).dncCreate},
	{"deleteDncEntries", "", 0.4, (*mix).dncDelete},
	{"listDncEntries", "", 1, (*mix).dncList},
	{"checkDnc", "", 2, (*mix).dncCheck},
	{"listCalls", "", 5, (*mix).callList},
	{"getCall", "", 5, (*mix).callDetail},
	{"listUsers", "", 2, (*mix).userList},
	{"listUsersAlias", "", 1, (*mix).userListAlias},
	{"getUser", "", 3, (*mix).userDetail},
	{"createAgentGroup", "", 1, (*mix).agentGroupCreate},
	{"updateAgentGroup", "", 1, (*mix).agentGroupUpdate},
	{"listAgentGroups", "", 3, (*mix).agentGroupList},
	{"listAgentStates", "", 1, (*mix).agentStateList},
	{"setAgentState", "", 0.5, (*mix).agentStateSet},
	{"reportOrders", "", 0.5, (*mix).reportOrders},
	{"reportAgents", "", 0.3, (*mix).reportAgents},
	{"streamReportLive", "", 0.3, (*mix).reportLive},
	{"notifyUser", "", 2, (*mix).notifyPrivate},
	{"notifyAll", "", 0.2, (*mix).notifyPublic},
	{"notifyGroup", "", 0.3, (*mix).notifyGroup},
	{"listMyNotifications", "", 4, (*mix).notificationList},
	{"markNotificationRead", "", 1, (*mix).notificationRead},
	{"streamMyNotifications", "", 0.5, (*mix).notificationStream},
	{"createWebhook", "", 0.2, (*mix).webhookCreate},
	{"deleteWebhook", "", 0.2, (*mix).webhookDelete},
	{"updateWebhook", "", 0.3, (*mix).webhookUpdate},
	{"rotateWebhookSecret", "", 0.2, (*mix).webhookRotate},
	{"listWebhooks", "", 1, (*mix).webhookList},
	{"getWebhook", "", 1, (*mix).webhookDetail},
	{"listWebhookDeliveries", "", 1, (*mix).webhookDeliveries},
	{"redeliverWebhookEvent", "", 0.3, (*mix).webhookRedeliver},
	{"healthCheck", "", 1, (*mix).healthCheck},
	{"listApiKeys", "", 2, (*mix).apiKeyList},
	{"createApiKey", "", 0.5, (*mix).apiKeyCreate},
	{"revokeApiKey", "", 0.5, (*mix).apiKeyRevoke},
}

// leadOrder is an order the mix sends leads to.
type leadOrder struct {
	id   int
	code string
}

// hookEvent is an event a webhook of the mix was sent.
type hookEvent struct {
	webhook int
	event   string
}

// mix is the load: the clients, the ids it works on, and what it measured.
type mix struct {
	routes map[string]route
	ops    []op
	rec    *recorder
	hc     *http.Client
	// api is the demo admin's typed client, anon one without a key, other a client user's (whose
	// requests for the admin's objects are refused); rawAPI and rawAnon send what the typed client
	// cannot (bad input).
	api, anon, other *ccapi.ClientWithResponses
	rawAPI, rawAnon  *loadtest.Client

	adminID int
	// badUserID gets the bad input's API keys: a demo user other than the admin.
	badUserID int
	// leadOrders get the mix's leads: the first dials (its leads are leased), the second has the
	// mix's webhooks, the third its do-not-call entries.
	leadOrders []leadOrder
	// badOrder gets the bad input's leads, imports and do-not-call entries.
	badOrder   leadOrder
	callOrders []int
	orders     *ring[int]
	leads      *ring[int]
	calls      *ring[int]
	users      *ring[int]
	groups     *ring[int]
	notes      *ring[int]
	jobs       *ring[openapi_types.UUID]
	imports    *ring[openapi_types.UUID]
	events     *ring[hookEvent]
	// Made and removed again by the mix.
	keys   queue[int]
	leases queue[openapi_types.UUID]
	dnc    queue[string]
	// hooks are the webhooks made at setup, which stay; spareHooks those the mix makes and deletes.
	hooks      []int
	spareHooks queue[int]
	receiver   *receiver

	seq        atomic.Int64
	callErrors atomic.Int64
	// paused and inflight let a sample be taken without load (quiet).
	paused   atomic.Bool
	inflight atomic.Int64
}

func newMix(routes map[string]route, baseURL string, keys callers, workers int) (*mix, error) {
	raw := loadtest.NewClient(baseURL, workers, map[string]string{"X-Api-Key": keys.admin})
	m := &mix{
		routes: routes, ops: append(append([]op{}, ops...), badOps...), rec: newRecorder(), hc: raw.HTTP,
		rawAPI: raw, rawAnon: &loadtest.Client{HTTP: raw.HTTP, BaseURL: baseURL},
		orders: newRing[int](), leads: newRing[int](), calls: newRing[int](), users: newRing[int](),
		groups: newRing[int](), notes: newRing[int](), jobs: newRing[openapi_types.UUID](),
		imports: newRing[openapi_types.UUID](), events: newRing[hookEvent](),
	}
	var err error
	if m.api, err = typedClient(raw.HTTP, baseURL, keys.admin); err != nil {
		return nil, err
	}
	if m.anon, err = typedClient(raw.HTTP, baseURL, ""); err != nil {
		return nil, err
	}
	if m.other, err = typedClient(raw.HTTP, baseURL, keys.other); err != nil {
		return nil, err
	}
	if missing, unknown := uncovered(routes, m.ops); len(missing) > 0 || len(unknown) > 0 {
		return nil, fmt.Errorf("the mix does not send the operations %v of the API description; it sends %v, which the description does not have", missing, unknown)
	}
	return m, nil
}

// callers are the API keys of the mix: the demo admin's, and a client's.
type callers struct {
	admin, other string
}

// phone is a distinct valid Moscow mobile number per call, so no lead links to another.
func (m *mix) phone() string { return fmt.Sprintf("7916%07d", 1000000+m.seq.Add(1)%8000000) }

func (m *mix) leadOrder() leadOrder { return m.leadOrders[rand.IntN(len(m.leadOrders))] }

func (m *mix) n() int64 { return m.seq.Add(1) }
