package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"ccplatform/clients/go/ccapi"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// The dialing queue (lease, extend, release), the do-not-call list and lead imports.

// leaseSeconds is how long the mix's leases hold their leads: an expired lease gives them back by
// itself, so leads the mix does not release come back too.
const leaseSeconds = 60

// lease leases due leads of the dialing order (whose schedule is always open); a lease that got
// leads is extended and released later.
func (m *mix) lease(ctx context.Context) {
	body := ccapi.LeaseRequest{OrderId: m.leadOrders[0].id, Limit: ptr(5), LeaseSeconds: ptr(leaseSeconds), DialerId: "soak"}
	if r, ok := measure(m, "leaseLeads", "", success, func() (*ccapi.LeaseLeadsResponse, error) {
		return m.api.LeaseLeadsWithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil && r.JSON200.Data.LeaseId != nil {
		m.leases.push(*r.JSON200.Data.LeaseId)
	}
}

// pacedLease leases without a limit: the mix's orders have no agents, so it hands out nothing and
// says when to ask again.
func (m *mix) pacedLease(ctx context.Context) {
	body := ccapi.LeaseRequest{OrderId: m.leadOrders[0].id, LeaseSeconds: ptr(leaseSeconds), DialerId: "soak-paced"}
	measure(m, "leaseLeads", "", success, func() (*ccapi.LeaseLeadsResponse, error) {
		return m.api.LeaseLeadsWithResponse(ctx, nil, body)
	})
}

func (m *mix) dialerPace(ctx context.Context) {
	measure(m, "getDialerPace", "", success, func() (*ccapi.GetDialerPaceResponse, error) {
		return m.api.GetDialerPaceWithResponse(ctx, m.leadOrders[0].id)
	})
}

func (m *mix) dialerExplain(ctx context.Context) {
	measure(m, "explainDialer", "", success, func() (*ccapi.ExplainDialerResponse, error) {
		return m.api.ExplainDialerWithResponse(ctx, m.leadOrders[0].id)
	})
}

func (m *mix) extendLease(ctx context.Context) {
	id, ok := m.leases.peek()
	if !ok {
		return
	}
	measure(m, "extendLease", "", success, func() (*ccapi.ExtendLeaseResponse, error) {
		return m.api.ExtendLeaseWithResponse(ctx, ccapi.ExtendRequest{LeaseId: id, LeaseSeconds: ptr(leaseSeconds)})
	})
}

// release gives back every lead of the oldest lease but the two newest.
func (m *mix) release(ctx context.Context) {
	id, ok := m.leases.pop(2)
	if !ok {
		return
	}
	measure(m, "releaseLeads", "", success, func() (*ccapi.ReleaseLeadsResponse, error) {
		return m.api.ReleaseLeadsWithResponse(ctx, nil, ccapi.ReleaseRequest{LeaseId: id})
	})
}

// dncOrder is the order of the mix's do-not-call entries.
func (m *mix) dncOrder() int { return m.leadOrders[2].id }

func (m *mix) dncCreate(ctx context.Context) {
	phone := m.phone()
	body := ccapi.DncCreate{Phones: []string{phone}, OrderId: ptr(m.dncOrder()), Reason: ptr("soak")}
	if _, ok := measure(m, "createDncEntries", "", success, func() (*ccapi.CreateDncEntriesResponse, error) {
		return m.api.CreateDncEntriesWithResponse(ctx, nil, body)
	}); ok {
		m.dnc.push(phone)
	}
}

// dncDelete removes the oldest entry of the mix but the last 50.
func (m *mix) dncDelete(ctx context.Context) {
	phone, ok := m.dnc.pop(50)
	if !ok {
		return
	}
	measure(m, "deleteDncEntries", "", success, func() (*ccapi.DeleteDncEntriesResponse, error) {
		return m.api.DeleteDncEntriesWithResponse(ctx, ccapi.DncDelete{Phones: []string{phone}, OrderId: ptr(m.dncOrder())})
	})
}

func (m *mix) dncList(ctx context.Context) {
	measure(m, "listDncEntries", "", success, func() (*ccapi.ListDncEntriesResponse, error) {
		return m.api.ListDncEntriesWithResponse(ctx, &ccapi.ListDncEntriesParams{OrderId: ptr(m.dncOrder()), Limit: ptr(20)})
	})
}

// dncCheck asks for a listed phone when there is one, else for a fresh one.
func (m *mix) dncCheck(ctx context.Context) {
	phone, ok := m.dnc.peek()
	if !ok {
		phone = m.phone()
	}
	measure(m, "checkDnc", "", success, func() (*ccapi.CheckDncResponse, error) {
		return m.api.CheckDncWithResponse(ctx, &ccapi.CheckDncParams{Phone: phone, OrderId: ptr(m.dncOrder())})
	})
}

// rowsPerImport is how many leads an import of the mix holds.
const rowsPerImport = 5

// importCSV imports a small CSV file whose rows name no order (the query does).
func (m *mix) importCSV(ctx context.Context) {
	o := m.leadOrder()
	var b bytes.Buffer
	b.WriteString("phone,leadType,name\n")
	for range rowsPerImport {
		fmt.Fprintf(&b, "%s,%s,Soak import\n", m.phone(), ccapi.LeadCreateLeadTypeStraight)
	}
	m.importFile(ctx, "", &ccapi.ImportLeadsParams{OrderId: ptr(o.id), OrderCode: ptr(o.code)}, "text/csv", b.Bytes(), success)
}

// importNDJSON imports a small NDJSON file, one createLead body a line.
func (m *mix) importNDJSON(ctx context.Context) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for range rowsPerImport {
		if err := enc.Encode(m.v2Lead()); err != nil {
			panic(fmt.Sprintf("soak: an NDJSON row: %v", err))
		}
	}
	m.importFile(ctx, "", nil, "application/x-ndjson", b.Bytes(), success)
}

func (m *mix) importFile(ctx context.Context, bad string, params *ccapi.ImportLeadsParams, contentType string, file []byte, want expect) {
	if r, ok := measure(m, "importLeads", bad, want, func() (*ccapi.ImportLeadsResponse, error) {
		return m.api.ImportLeadsWithBodyWithResponse(ctx, params, contentType, bytes.NewReader(file))
	}); ok && bad == "" && r.JSON202 != nil {
		m.imports.add(r.JSON202.Data.Id)
	}
}

func (m *mix) importDetail(ctx context.Context) {
	id := m.imports.pick()
	if id == (openapi_types.UUID{}) {
		return
	}
	measure(m, "getLeadImport", "", success, func() (*ccapi.GetLeadImportResponse, error) {
		return m.api.GetLeadImportWithResponse(ctx, id)
	})
}

func (m *mix) importRows(ctx context.Context) {
	id := m.imports.pick()
	if id == (openapi_types.UUID{}) {
		return
	}
	measure(m, "listLeadImportRows", "", success, func() (*ccapi.ListLeadImportRowsResponse, error) {
		return m.api.ListLeadImportRowsWithResponse(ctx, id, &ccapi.ListLeadImportRowsParams{Limit: ptr(20)})
	})
}
