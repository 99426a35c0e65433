package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"ccplatform/clients/go/ccapi"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// badOps are the requests of the mix that carry bad input on purpose, each named for the input: a
// partner's bugs, a scanner, a client that cuts a body short. Every one must be refused with a 4xx
// (three with the exact status their rule names) and change nothing; a 5xx fails the run whatever
// the input. Where the typed client can hold the bad value (an unknown enum value, a date out of
// range, a control byte in a string) it sends it; where it cannot (`%00` for an integer id,
// broken JSON) the request is put together by hand from the route of the description.
var badOps = []op{
	{"createOrder", "invalid JSON", 0.1, (*mix).badJSON},
	{"createLead", "wrong types", 0.1, (*mix).badTypes},
	{"createLead", "unknown enum value", 0.1, (*mix).badLeadType},
	{"createWebhook", "unknown event type", 0.1, (*mix).badEventType},
	{"listWebhookDeliveries", "unknown state", 0.1, (*mix).badState},
	{"createLead", "phone 12", 1, (*mix).badPhone},
	{"createLead", "date 9999-12-31T23:59:59-14:00", 0.1, (*mix).badPlanningDate},
	{"createLead", "year 0000", 0.1, (*mix).badPlanningYearZero},
	{"createApiKey", "date 9999-12-31T23:59:59-14:00", 0.1, (*mix).badKeyExpiry},
	{"createDncEntries", "date 9999-12-31T23:59:59-14:00", 0.1, (*mix).badDncLate},
	{"listLeads", "date 9999-12-31T23:59:59-14:00", 0.1, (*mix).badListDate},
	{"listCalls", "year 0000", 0.1, (*mix).badYearZero},
	{"createDncEntries", "year 0000", 0.1, (*mix).badDncExpiry},
	{"getOrder", "%00 in path", 0.1, (*mix).badPathNUL},
	{"getLeadJob", "%ff in path", 0.1, (*mix).badPathFF},
	{"getWebhook", "%c3%28 in path", 0.1, (*mix).badPathUTF8},
	{"redeliverWebhookEvent", "%00 in path", 0.1, (*mix).badEventNUL},
	{"redeliverWebhookEvent", "%ff in path", 0.1, (*mix).badEventFF},
	{"importLeads", "%00 in query", 0.1, (*mix).badImportCodeNUL},
	{"checkDnc", "%00 in query", 0.1, (*mix).badQueryNUL},
	{"listLeads", "%ff in query", 0.1, (*mix).badQueryFF},
	{"listDncEntries", "%c3%28 in query", 0.1, (*mix).badQueryUTF8},
	{"createLead", "oversize body", 0.1, (*mix).badOversize},
	{"importLeads", "wide CSV header", 0.1, (*mix).badWideCSV},
	{"getLead", "unknown id", 1, (*mix).badUnknownLead},
	{"getWebhook", "unknown id", 0.1, (*mix).badUnknownWebhook},
	{"getLeadImport", "unknown id", 0.1, (*mix).badUnknownImport},
	{"releaseLeads", "unknown id", 0.1, (*mix).badUnknownLease},
	{"getWebhook", "another caller's id", 0.1, (*mix).badOtherWebhook},
	{"getLead", "another caller's id", 0.1, (*mix).badOtherLead},
	{"updateOrder", "another caller's id", 0.1, (*mix).badOtherOrder},
	{"getOrder", "no key", 0.5, (*mix).badNoKey},
}

// The dates no caller means: the last second of year 9999 at the westernmost offset (after UTC's
// year 9999), and year 0.
const (
	dateTooLate = "9999-12-31T23:59:59-14:00"
	yearZero    = "0000-01-01T00:00:00Z"
)

// unknownID is an id no object of the stack has.
const unknownID = 999_999_999

func jsonBody(s string) *bytes.Reader { return bytes.NewReader([]byte(s)) }

// badLead is a valid lead of the bad-input order, for a bad input to spoil: a bad value the stack
// accepts stays there, out of the valid requests' way, and shows as that input's own failure.
func (m *mix) badLead() ccapi.LeadCreate {
	return ccapi.LeadCreate{LeadType: ccapi.LeadCreateLeadTypeStraight, Phone: m.phone(), OrderId: m.badOrder.id, OrderCode: m.badOrder.code}
}

func (m *mix) badJSON(ctx context.Context) {
	measure(m, "createOrder", "invalid JSON", refused, func() (*ccapi.CreateOrderResponse, error) {
		return m.api.CreateOrderWithBodyWithResponse(ctx, nil, "application/json", jsonBody(`{"serviceTitle": "Soak", "title": `))
	})
}

func (m *mix) badTypes(ctx context.Context) {
	o := m.badOrder
	body := fmt.Sprintf(`{"leadType": "straight", "phone": %s, "orderId": "%d", "orderCode": %q, "priority": "high"}`, m.phone(), o.id, o.code)
	measure(m, "createLead", "wrong types", refused, func() (*ccapi.CreateLeadResponse, error) {
		return m.api.CreateLeadWithBodyWithResponse(ctx, nil, "application/json", jsonBody(body))
	})
}

func (m *mix) badLeadType(ctx context.Context) {
	body := m.badLead()
	body.LeadType = "sideways"
	measure(m, "createLead", "unknown enum value", refused, func() (*ccapi.CreateLeadResponse, error) {
		return m.api.CreateLeadWithResponse(ctx, nil, body)
	})
}

func (m *mix) badEventType(ctx context.Context) {
	body := m.hookInput("soak bad")
	body.Events = &[]ccapi.WebhookEventType{"lead.exploded"}
	measure(m, "createWebhook", "unknown event type", refused, func() (*ccapi.CreateWebhookResponse, error) {
		return m.api.CreateWebhookWithResponse(ctx, nil, body)
	})
}

func (m *mix) badState(ctx context.Context) {
	measure(m, "listWebhookDeliveries", "unknown state", refused, func() (*ccapi.ListWebhookDeliveriesResponse, error) {
		return m.api.ListWebhookDeliveriesWithResponse(ctx, m.hook(), &ccapi.ListWebhookDeliveriesParams{State: ptr(ccapi.ListWebhookDeliveriesParamsState("lost"))})
	})
}

// badPhone is a lead whose phone cannot be a number: a 400 naming the field.
func (m *mix) badPhone(ctx context.Context) {
	body := m.badLead()
	body.Phone = "12"
	measure(m, "createLead", "phone 12", exactly(http.StatusBadRequest), func() (*ccapi.CreateLeadResponse, error) {
		return m.api.CreateLeadWithResponse(ctx, nil, body)
	})
}

func (m *mix) badPlanningDate(ctx context.Context) {
	m.badPlanning(ctx, "date "+dateTooLate, dateTooLate)
}

func (m *mix) badPlanningYearZero(ctx context.Context) { m.badPlanning(ctx, "year 0000", yearZero) }

func (m *mix) badPlanning(ctx context.Context, bad, date string) {
	body := m.badLead()
	body.PlanningCallDateTime = &ccapi.UnixOrISOTime{}
	_ = body.PlanningCallDateTime.FromUnixOrISOTime1(date)
	measure(m, "createLead", bad, refused, func() (*ccapi.CreateLeadResponse, error) {
		return m.api.CreateLeadWithResponse(ctx, nil, body)
	})
}

// tooLate is dateTooLate as a time: year 9999 at its own offset, so that it encodes as given.
func tooLate() time.Time { return time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -14*3600)) }

// badKeyExpiry is a key for another user than the admin, whose keys the mix lists.
func (m *mix) badKeyExpiry(ctx context.Context) {
	body := ccapi.ApiKeyCreate{Name: ptr("soak bad"), Scopes: &[]ccapi.Scope{ccapi.LeadsRead}, ExpiresAt: ptr(tooLate()), UserId: ptr(m.badUserID)}
	measure(m, "createApiKey", "date "+dateTooLate, refused, func() (*ccapi.CreateApiKeyResponse, error) {
		return m.api.CreateApiKeyWithResponse(ctx, nil, body)
	})
}

func (m *mix) badDncLate(ctx context.Context) {
	body := ccapi.DncCreate{Phones: []string{m.phone()}, OrderId: ptr(m.badOrder.id), ExpiresAt: ptr(tooLate())}
	measure(m, "createDncEntries", "date "+dateTooLate, refused, func() (*ccapi.CreateDncEntriesResponse, error) {
		return m.api.CreateDncEntriesWithResponse(ctx, nil, body)
	})
}

func (m *mix) badListDate(ctx context.Context) {
	measure(m, "listLeads", "date "+dateTooLate, refused, func() (*ccapi.ListLeadsResponse, error) {
		return m.api.ListLeadsWithResponse(ctx, &ccapi.ListLeadsParams{CreatedAt0: ptr(dateTooLate), Limit: ptr(20)})
	})
}

func (m *mix) badYearZero(ctx context.Context) {
	measure(m, "listCalls", "year 0000", refused, func() (*ccapi.ListCallsResponse, error) {
		return m.api.ListCallsWithResponse(ctx, &ccapi.ListCallsParams{CreatedAt0: ptr(yearZero), Limit: ptr(20)})
	})
}

func (m *mix) badDncExpiry(ctx context.Context) {
	body := ccapi.DncCreate{Phones: []string{m.phone()}, OrderId: ptr(m.badOrder.id), ExpiresAt: ptr(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))}
	measure(m, "createDncEntries", "year 0000", refused, func() (*ccapi.CreateDncEntriesResponse, error) {
		return m.api.CreateDncEntriesWithResponse(ctx, nil, body)
	})
}

func (m *mix) badPathNUL(ctx context.Context) {
	m.raw(ctx, m.rawAPI, "getOrder", "%00 in path", refused, m.route("getOrder").fill("%00"), nil)
}

func (m *mix) badPathFF(ctx context.Context) {
	m.raw(ctx, m.rawAPI, "getLeadJob", "%ff in path", refused, m.route("getLeadJob").fill("%ff"), nil)
}

func (m *mix) badPathUTF8(ctx context.Context) {
	m.raw(ctx, m.rawAPI, "getWebhook", "%c3%28 in path", refused, m.route("getWebhook").fill("%c3%28"), nil)
}

// badEventNUL and badEventFF are event ids (text, not a number) with a NUL byte and a byte that is
// not UTF-8: the typed client sends them as %00 and %FF.
func (m *mix) badEventNUL(ctx context.Context) { m.badEvent(ctx, "%00 in path", "evt\x00") }

func (m *mix) badEventFF(ctx context.Context) { m.badEvent(ctx, "%ff in path", "evt\xff") }

func (m *mix) badEvent(ctx context.Context, bad, event string) {
	measure(m, "redeliverWebhookEvent", bad, refused, func() (*ccapi.RedeliverWebhookEventResponse, error) {
		return m.api.RedeliverWebhookEventWithResponse(ctx, m.hook(), event)
	})
}

// badImportCodeNUL is an import whose order code (a query value) holds a NUL byte.
func (m *mix) badImportCodeNUL(ctx context.Context) {
	file := []byte("phone,leadType\n" + m.phone() + ",straight\n")
	m.importFile(ctx, "%00 in query", &ccapi.ImportLeadsParams{OrderId: ptr(m.badOrder.id), OrderCode: ptr(m.badOrder.code + "\x00")}, "text/csv", file, refused)
}

// badQueryNUL is a phone with a NUL byte: the typed client sends it as %00.
func (m *mix) badQueryNUL(ctx context.Context) {
	measure(m, "checkDnc", "%00 in query", refused, func() (*ccapi.CheckDncResponse, error) {
		return m.api.CheckDncWithResponse(ctx, &ccapi.CheckDncParams{Phone: "7916\x00", OrderId: ptr(m.dncOrder())})
	})
}

func (m *mix) badQueryFF(ctx context.Context) {
	m.raw(ctx, m.rawAPI, "listLeads", "%ff in query", refused, m.route("listLeads").fill()+"?orderIds[]=%ff&limit=20", nil)
}

// badQueryUTF8 is a phone that is not UTF-8 (a lead byte without its follower): sent as %C3(.
func (m *mix) badQueryUTF8(ctx context.Context) {
	measure(m, "listDncEntries", "%c3%28 in query", refused, func() (*ccapi.ListDncEntriesResponse, error) {
		return m.api.ListDncEntriesWithResponse(ctx, &ccapi.ListDncEntriesParams{Phone: ptr("\xc3\x28"), Limit: ptr(20)})
	})
}

// badOversize is a lead create one byte over the gateway's default body limit (1 MiB).
func (m *mix) badOversize(ctx context.Context) {
	const limit = 1 << 20
	prefix, suffix := `{"leadType": "straight", "name": "`, `"}`
	body := prefix + strings.Repeat("x", limit+1-len(prefix)-len(suffix)) + suffix
	measure(m, "createLead", "oversize body", refused, func() (*ccapi.CreateLeadResponse, error) {
		return m.api.CreateLeadWithBodyWithResponse(ctx, nil, "application/json", jsonBody(body))
	})
}

// badWideCSV is a CSV import (one row) whose header has 10,000 columns that are no field of a
// lead: refused whole, as a header column that is not a field is. Not wider: the answer names
// every column, and at 100,000 lead-api's memory follows the answers (docs/performance.md).
func (m *mix) badWideCSV(ctx context.Context) {
	const columns = 10_000
	var b strings.Builder
	b.WriteString("phone,leadType")
	for i := range columns {
		fmt.Fprintf(&b, ",column%d", i+1)
	}
	fmt.Fprintf(&b, "\n%s,straight%s\n", m.phone(), strings.Repeat(",", columns))
	params := &ccapi.ImportLeadsParams{OrderId: ptr(m.badOrder.id), OrderCode: ptr(m.badOrder.code)}
	m.importFile(ctx, "wide CSV header", params, "text/csv", []byte(b.String()), refused)
}

// badUnknownLead is a lead id that does not exist: a 404.
func (m *mix) badUnknownLead(ctx context.Context) {
	measure(m, "getLead", "unknown id", exactly(http.StatusNotFound), func() (*ccapi.GetLeadResponse, error) {
		return m.api.GetLeadWithResponse(ctx, unknownID)
	})
}

func (m *mix) badUnknownWebhook(ctx context.Context) {
	measure(m, "getWebhook", "unknown id", refused, func() (*ccapi.GetWebhookResponse, error) {
		return m.api.GetWebhookWithResponse(ctx, unknownID)
	})
}

func (m *mix) badUnknownImport(ctx context.Context) {
	measure(m, "getLeadImport", "unknown id", refused, func() (*ccapi.GetLeadImportResponse, error) {
		return m.api.GetLeadImportWithResponse(ctx, openapi_types.UUID{0: 0x50, 6: 0x40, 8: 0x80, 15: 1})
	})
}

func (m *mix) badUnknownLease(ctx context.Context) {
	body := ccapi.ReleaseRequest{LeaseId: openapi_types.UUID{0: 0x50, 6: 0x40, 8: 0x80, 15: 2}}
	measure(m, "releaseLeads", "unknown id", refused, func() (*ccapi.ReleaseLeadsResponse, error) {
		return m.api.ReleaseLeadsWithResponse(ctx, nil, body)
	})
}

// The client user's requests for the admin's objects (a webhook it did not make, a lead and an
// order of another client's order).

func (m *mix) badOtherWebhook(ctx context.Context) {
	measure(m, "getWebhook", "another caller's id", refused, func() (*ccapi.GetWebhookResponse, error) {
		return m.other.GetWebhookWithResponse(ctx, m.hook())
	})
}

func (m *mix) badOtherLead(ctx context.Context) {
	measure(m, "getLead", "another caller's id", refused, func() (*ccapi.GetLeadResponse, error) {
		return m.other.GetLeadWithResponse(ctx, m.leads.pick())
	})
}

func (m *mix) badOtherOrder(ctx context.Context) {
	body := ccapi.OrderWritable{Title: ptr("not mine")}
	measure(m, "updateOrder", "another caller's id", refused, func() (*ccapi.UpdateOrderResponse, error) {
		return m.other.UpdateOrderWithResponse(ctx, m.leadOrder().id, body)
	})
}

// badNoKey is a request without X-Api-Key: a 401.
func (m *mix) badNoKey(ctx context.Context) {
	measure(m, "getOrder", "no key", exactly(http.StatusUnauthorized), func() (*ccapi.GetOrderResponse, error) {
		return m.anon.GetOrderWithResponse(ctx, m.orders.pick())
	})
}
