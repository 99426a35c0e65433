package main

import (
	"context"
	"fmt"

	"ccplatform/clients/go/ccapi"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// The operations on leads: creates (v2 and v1, at once and through a job), reads and updates.

func (m *mix) v2Lead() ccapi.LeadCreate {
	o := m.leadOrder()
	return ccapi.LeadCreate{LeadType: ccapi.LeadCreateLeadTypeStraight, Phone: m.phone(), OrderId: o.id, OrderCode: o.code, Name: ptr("Soak")}
}

func (m *mix) v1Lead() ccapi.LeadCreateV1 {
	o := m.leadOrder()
	l := ccapi.LeadCreateV1{LeadType: ccapi.LeadCreateV1LeadTypeStraight, ClientPhone: m.phone(), OrderId: o.id, OrderCode: o.code, SocialLogin: "soak"}
	// A union of the description (digits as a number or a string): set through its own methods,
	// which cannot fail for these values.
	_ = l.MessengerId.FromDigitsID0(5550001)
	_ = l.SocialNetworkId.FromDigitsID1("123456")
	return l
}

func (m *mix) leadCreateV2(ctx context.Context) {
	body := m.v2Lead()
	if r, ok := measure(m, "createLead", "", success, func() (*ccapi.CreateLeadResponse, error) {
		return m.api.CreateLeadWithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.leads.add(r.JSON200.Data.Id)
	}
}

func (m *mix) leadCreateV1(ctx context.Context) {
	body := m.v1Lead()
	if r, ok := measure(m, "createLeadV1", "", success, func() (*ccapi.CreateLeadV1Response, error) {
		return m.api.CreateLeadV1WithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.leads.add(r.JSON200.Data.Id)
	}
}

func (m *mix) leadCreateAsyncV2(ctx context.Context) {
	body := m.v2Lead()
	if r, ok := measure(m, "createLeadAsync", "", success, func() (*ccapi.CreateLeadAsyncResponse, error) {
		return m.api.CreateLeadAsyncWithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.jobs.add(r.JSON200.Data.JobId)
	}
}

func (m *mix) leadCreateAsyncV1(ctx context.Context) {
	body := m.v1Lead()
	if r, ok := measure(m, "createLeadAsyncV1", "", success, func() (*ccapi.CreateLeadAsyncV1Response, error) {
		return m.api.CreateLeadAsyncV1WithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.jobs.add(r.JSON200.Data.JobId)
	}
}

func (m *mix) leadJob(ctx context.Context) {
	job := m.jobs.pick()
	if job == (openapi_types.UUID{}) {
		return
	}
	if r, ok := measure(m, "getLeadJob", "", success, func() (*ccapi.GetLeadJobResponse, error) {
		return m.api.GetLeadJobWithResponse(ctx, job)
	}); ok && r.JSON200 != nil && r.JSON200.Data.LeadId != nil {
		m.leads.add(*r.JSON200.Data.LeadId)
	}
}

func (m *mix) leadList(ctx context.Context) {
	measure(m, "listLeads", "", success, func() (*ccapi.ListLeadsResponse, error) {
		return m.api.ListLeadsWithResponse(ctx, &ccapi.ListLeadsParams{OrderIds: &ccapi.IDList{m.leadOrder().id}, Limit: ptr(20)})
	})
}

func (m *mix) leadDetail(ctx context.Context) {
	measure(m, "getLead", "", success, func() (*ccapi.GetLeadResponse, error) {
		return m.api.GetLeadWithResponse(ctx, m.leads.pick())
	})
}

func (m *mix) leadUpdateV2(ctx context.Context) {
	body := ccapi.LeadUpdate{Name: ptr(fmt.Sprintf("Soak %d", m.n()))}
	measure(m, "updateLead", "", success, func() (*ccapi.UpdateLeadResponse, error) {
		return m.api.UpdateLeadWithResponse(ctx, m.leads.pick(), body)
	})
}

func (m *mix) leadUpdateV1(ctx context.Context) {
	body := ccapi.LeadUpdateV1{ClientName: ptr(fmt.Sprintf("Soak %d", m.n()))}
	measure(m, "updateLeadV1", "", success, func() (*ccapi.UpdateLeadV1Response, error) {
		return m.api.UpdateLeadV1WithResponse(ctx, m.leads.pick(), body)
	})
}
