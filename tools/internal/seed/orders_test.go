package seed

import (
	"encoding/json"
	"testing"
	"time"

	"ccplatform/tools/internal/demo"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)

func TestOrderBodyNamesBecomeIDs(t *testing.T) {
	d := demo.Orders(now)[0]
	refs := orderRefs{
		users:  map[string]int{"agent.petrov@demo.callcenter.local": 5, "senior@demo.callcenter.local": 4},
		groups: map[string]int{"Sales": 1, "Customer support": 2},
		fields: map[string]int{},
	}
	for i, f := range demo.OrderCustomFields() {
		refs.fields[f.Code] = 10 + i
	}
	b, err := orderBody(d, refs)
	require.NoError(t, err)
	assert.Equal(t, d.Code, *b.Code)
	assert.Equal(t, []int{5, 4}, *b.AgentUserIds)
	assert.Equal(t, []int{1}, *b.AgentGroupIds)
	values := *b.CustomValues
	assert.Equal(t, "Банк «Восход»", values["10"])
	assert.Equal(t, "finance", values["15"])
	assert.Len(t, values, len(d.CustomValues))
	assert.Equal(t, d.Holidays, *b.CallHolidayOverrides)
	assert.True(t, *b.AutoDialingEnabled)

	raw, err := json.Marshal(b)
	require.NoError(t, err)
	var wire map[string]any
	require.NoError(t, json.Unmarshal(raw, &wire))
	for _, k := range []string{"code", "serviceTitle", "title", "status", "callSchedule", "callHolidayOverrides",
		"agentUserIds", "agentGroupIds", "sipEndpointIds", "customValues", "transferNumbers"} {
		assert.Contains(t, wire, k, "the order service's field names")
	}
	for _, k := range []string{"autoDialingEnabled", "predictiveModeEnabled", "amdDetectionEnabled", "showLeadContactsToAgent",
		"speechRecognitionEnabled", "agentLeadCreationIsAllowed", "qualifiedLeadsPerDayLimit", "aiDefaultLanguage",
		"callRecordRule", "sipEndpointUsageScheme", "agentLeadEditMode"} {
		assert.Contains(t, wire, k, "set by the demo, never left to the service's default")
	}
	assert.Equal(t, []any{map[string]any{"number": "+74951234567", "names": map[string]any{"ru": "Старший смены", "gb": "Shift supervisor"}},
		map[string]any{"number": "+78002504455", "names": map[string]any{"ru": "Горячая линия банка", "gb": "Bank hotline"}}},
		wire["transferNumbers"])

	carLoans := demo.Orders(now)[1]
	require.False(t, carLoans.PredictiveMode)
	refs.users["agent.smith@demo.callcenter.local"] = 6
	b, err = orderBody(carLoans, refs)
	require.NoError(t, err)
	raw, err = json.Marshal(b)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"predictiveModeEnabled":false`, "false is sent, not left out")

	delete(refs.users, "senior@demo.callcenter.local")
	_, err = orderBody(d, refs)
	assert.ErrorContains(t, err, `no agent "senior@demo.callcenter.local"`)
	refs.users["senior@demo.callcenter.local"] = 4
	delete(refs.fields, "industry")
	_, err = orderBody(d, refs)
	assert.ErrorContains(t, err, `no order custom field has code "industry"`)
}

func TestLeadBodyCodesBecomeIDs(t *testing.T) {
	msk := int64(3)
	refs := leadRefs{statuses: map[string]int{"new": 1, "callback": 2}, fields: map[string]int{}}
	for i, f := range demo.LeadCustomFields() {
		refs.fields[f.Code] = 20 + i
	}
	l := demo.Lead{Name: "Анна Соколова", Phone: "+79161234567", LeadType: "straight", Source: "searchads.ads",
		AdCampaignID: "c-1", Status: "callback", CallbackIn: 26 * time.Hour, UTCOffset: &msk,
		CustomValues: map[string]any{"client_city": "Москва", "interests": "credit"}}
	b, err := leadBody(l, 7, "demo-x", refs, now)
	require.NoError(t, err)
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	assert.JSONEq(t, `{"leadType":"straight","phone":"+79161234567","orderId":7,"orderCode":"demo-x",
		"name":"Анна Соколова","utcOffset":3,"statusId":2,"source":"searchads.ads","adCampaignId":"c-1",
		"customValues":{"20":"Москва","26":"credit"},"planningCallDateTime":"2026-11-22T12:30:00Z"}`, string(raw))

	l.CallbackIn, l.UTCOffset, l.CustomValues = 0, nil, map[string]any{}
	l.Comment, l.CRMID, l.Priority = "Квиз: лимит до 300 000 ₽", "CRM-1", 10
	b, err = leadBody(l, 7, "demo-x", refs, now)
	require.NoError(t, err)
	raw, err = json.Marshal(b)
	require.NoError(t, err)
	for _, absent := range []string{"planningCallDateTime", "utcOffset", "customValues"} {
		assert.NotContains(t, string(raw), absent, "not sent: the service decides")
	}
	assert.Contains(t, string(raw), `"sourceComment":"Квиз: лимит до 300 000 ₽"`, "the comment is sent as a string")
	assert.Contains(t, string(raw), `"externalIdCrmA":"CRM-1"`)
	assert.Contains(t, string(raw), `"priority":10`)

	l.Name, l.Source, l.AdCampaignID, l.Comment, l.CRMID, l.Priority = "", "", "", "", "", 0
	b, err = leadBody(l, 7, "demo-x", refs, now)
	require.NoError(t, err)
	raw, err = json.Marshal(b)
	require.NoError(t, err)
	assert.JSONEq(t, `{"leadType":"straight","phone":"+79161234567","orderId":7,"orderCode":"demo-x","statusId":2,"source":""}`,
		string(raw), "empty texts and a zero priority are left out; the status and source are always sent")

	l.Status = "qualified"
	_, err = leadBody(l, 7, "demo-x", refs, now)
	assert.ErrorContains(t, err, `no lead status has code "qualified"`)
}

func TestCallCount(t *testing.T) {
	for _, n := range []int{1, 2, 15, 18, 25, 999} {
		c := CallCount(n)
		assert.GreaterOrEqual(t, c, n, "every lead is called")
		assert.LessOrEqual(t, c, 2*n, "no lead more than twice")
	}
	assert.Equal(t, 27, CallCount(18))
	assert.Equal(t, 1000, CallCount(5000), "simulate-calls' limit")
	assert.Equal(t, 0, CallCount(0))
}
