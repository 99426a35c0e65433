package seed

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"ccplatform/services/user/internal/user"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 21, 10, 30, 0, 0, time.UTC)

// The lead service's catalogs and rules the demo leads must follow (services/lead/README.md).
var (
	inProgressStatuses = []string{"new", "callback", "no_answer", "busy"}
	finalStatuses      = []string{"qualified", "rejected", "duplicate", "wrong_number", "not_interested"}
	adSystems          = []string{"searchads", "socialads", "videoads", "mapads", "mailads", "messengerads", "marketads"}
	russianMobile      = regexp.MustCompile(`^79\d{9}$`)
	phoneWriting       = regexp.MustCompile(`^\+7[\d ()-]+$`)
	orderCode          = regexp.MustCompile(`^[a-z0-9_-]{1,100}$`)
)

func TestDemoOrdersAreRealistic(t *testing.T) {
	orders := DemoOrders(now)
	require.Len(t, orders, 2)
	users := map[string]user.User{}
	for _, u := range DemoUsers(now) {
		users[u.Email] = u
	}
	groups := map[string]bool{}
	for _, g := range DemoAgentGroups() {
		groups[g.Names.GB] = true
	}
	codes := map[string]bool{}
	for _, o := range orders {
		assert.Regexp(t, orderCode, o.Code)
		assert.False(t, codes[o.Code], "code %s repeats", o.Code)
		codes[o.Code] = true
		assert.True(t, hasCyrillic(o.Title) && hasCyrillic(o.ServiceTitle), o.Code)
		assert.Contains(t, []string{"success", "secondary", "info"}, o.Status)

		require.Len(t, o.Schedule, 7, "a schedule of every day")
		for i, day := range o.Schedule {
			if len(day) == 0 {
				continue
			}
			require.Len(t, day, 2, "day %d", i)
			assert.Less(t, day[0], day[1], "day %d starts before it ends", i)
		}
		require.NotEmpty(t, o.Holidays)
		for _, h := range o.Holidays {
			d, err := time.Parse("02.01.2006", h)
			require.NoError(t, err, h)
			assert.GreaterOrEqual(t, d.Year(), now.Year())
		}
		require.NotEmpty(t, o.TransferNumbers)
		for _, tn := range o.TransferNumbers {
			assert.Regexp(t, `^\+7\d{10}$`, tn.Number)
			assert.NotEmpty(t, tn.Names["ru"])
			assert.NotEmpty(t, tn.Names["gb"])
		}
		checkValues(t, DemoOrderCustomFields(), o.CustomValues)
		assert.Len(t, o.CustomValues, len(DemoOrderCustomFields()), "a value of every order field")

		require.NotEmpty(t, o.AgentEmails)
		for _, e := range o.AgentEmails {
			u, ok := users[e]
			require.True(t, ok, "%s is a demo user", e)
			assert.True(t, u.IsActive, e)
			assert.Contains(t, []user.AccessGroup{user.GroupCallCenter, user.GroupCallCenterSenior}, u.AccessGroup, e)
		}
		require.NotEmpty(t, o.AgentGroupNames)
		for _, g := range o.AgentGroupNames {
			assert.True(t, groups[g], "%s is a demo agent group", g)
		}
		assert.NotEmpty(t, o.SipEndpointIDs)

		checkLeads(t, o)
	}
}

func checkLeads(t *testing.T, o DemoOrder) {
	t.Helper()
	assert.GreaterOrEqual(t, len(o.Leads), 15, o.Code)
	assert.LessOrEqual(t, len(o.Leads), 25, o.Code)
	var adSystem, organic, callbacks, outcomes, inferred int
	for _, l := range o.Leads {
		assert.Regexp(t, phoneWriting, l.Phone)
		assert.Regexp(t, russianMobile, phoneDigits(l.Phone), "a Russian mobile number: %s", l.Phone)
		assert.NotEmpty(t, l.Name, l.Phone)
		assert.Contains(t, []string{"straight", "selection"}, l.LeadType, l.Phone)
		assert.Contains(t, inProgressStatuses, l.Status, "a create takes only in_progress statuses: %s", l.Phone)
		if l.Outcome != "" {
			outcomes++
			assert.Contains(t, finalStatuses, l.Outcome, l.Phone)
		}
		if l.CallbackIn > 0 {
			callbacks++
		}
		if l.UTCOffset == nil {
			inferred++
		}
		switch sys, kind, ok := strings.Cut(l.Source, "."); {
		case !ok:
			assert.Contains(t, []string{"organic", "non-organic"}, l.Source)
			assert.Empty(t, l.AdCampaignID, "campaigns come with ad sources: %s", l.Phone)
			organic++
		default:
			assert.Contains(t, adSystems, sys, l.Source)
			assert.Contains(t, []string{"ads", "direct"}, kind, l.Source)
			assert.NotEmpty(t, l.AdCampaignID, l.Phone)
			adSystem++
		}
		checkValues(t, DemoLeadCustomFields(), l.CustomValues)
	}
	assert.Positive(t, SecondaryLeads(o.Leads), "%s has secondary leads", o.Code)
	assert.Positive(t, adSystem, o.Code)
	assert.Positive(t, organic, o.Code)
	assert.Positive(t, callbacks, o.Code)
	assert.Positive(t, outcomes, o.Code)
	assert.Positive(t, inferred, "%s has a lead whose offset the lead service decides", o.Code)
}

// checkValues checks demo custom values against the fields' types (docs/architecture.md).
func checkValues(t *testing.T, fields []CustomField, values map[string]any) {
	t.Helper()
	byCode := map[string]CustomField{}
	for _, f := range fields {
		byCode[f.Code] = f
	}
	for code, v := range values {
		f, ok := byCode[code]
		if !assert.True(t, ok, "no custom field %s", code) {
			continue
		}
		switch f.Type {
		case "string":
			assert.IsType(t, "", v, code)
		case "integer":
			assert.IsType(t, 0, v, code)
		case "number":
			assert.True(t, isNumber(v), code)
		case "boolean":
			assert.IsType(t, true, v, code)
		case "date":
			s, _ := v.(string)
			_, err := time.Parse(time.DateOnly, s)
			assert.NoError(t, err, code)
		case "select":
			assert.Contains(t, f.Options, v, code)
		case "multiselect":
			s, _ := v.(string)
			for _, part := range strings.Split(s, ",") {
				assert.Contains(t, f.Options, part, code)
			}
		default:
			t.Errorf("field %s: unknown type %s", code, f.Type)
		}
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, float64:
		return true
	}
	return false
}

func hasCyrillic(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Cyrillic, r) }) >= 0
}

func TestDemoHolidaysFollowTheYear(t *testing.T) {
	h := DemoOrders(time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC))[0].Holidays
	assert.Contains(t, h, "09.05.2031")
	assert.Contains(t, h, "01.01.2032")
	assert.NotContains(t, strings.Join(h, " "), "2030")
}

func TestOrderBodyNamesBecomeIDs(t *testing.T) {
	d := DemoOrders(now)[0]
	refs := orderRefs{
		users:  map[string]int64{"agent.petrov@demo.callcenter.local": 5, "senior@demo.callcenter.local": 4},
		groups: map[string]int64{"Sales": 1, "Customer support": 2},
		fields: map[string]int64{},
	}
	for i, f := range DemoOrderCustomFields() {
		refs.fields[f.Code] = int64(10 + i)
	}
	b, err := orderBody(d, refs)
	require.NoError(t, err)
	assert.Equal(t, d.Code, b.Code)
	assert.Equal(t, []int64{5, 4}, b.AgentUserIDs)
	assert.Equal(t, []int64{1}, b.AgentGroupIDs)
	assert.Equal(t, "Банк «Восход»", b.CustomValues["10"])
	assert.Equal(t, "finance", b.CustomValues["15"])
	assert.Len(t, b.CustomValues, len(d.CustomValues))
	assert.Equal(t, d.Holidays, b.CallHolidayOverrides)
	assert.True(t, b.AutoDialingEnabled)

	raw, err := json.Marshal(b)
	require.NoError(t, err)
	var wire map[string]any
	require.NoError(t, json.Unmarshal(raw, &wire))
	for _, k := range []string{"code", "serviceTitle", "title", "status", "callSchedule", "callHolidayOverrides",
		"agentUserIds", "agentGroupIds", "sipEndpointIds", "customValues", "transferNumbers"} {
		assert.Contains(t, wire, k, "the order service's field names")
	}

	delete(refs.users, "senior@demo.callcenter.local")
	_, err = orderBody(d, refs)
	assert.ErrorContains(t, err, `no agent "senior@demo.callcenter.local"`)
	refs.users["senior@demo.callcenter.local"] = 4
	delete(refs.fields, "industry")
	_, err = orderBody(d, refs)
	assert.ErrorContains(t, err, `no order custom field has code "industry"`)
}

func TestLeadBodyCodesBecomeIDs(t *testing.T) {
	refs := leadRefs{statuses: map[string]int64{"new": 1, "callback": 2}, fields: map[string]int64{}}
	for i, f := range DemoLeadCustomFields() {
		refs.fields[f.Code] = int64(20 + i)
	}
	l := DemoLead{Name: "Анна Соколова", Phone: "+79161234567", LeadType: "straight", Source: "searchads.ads",
		AdCampaignID: "c-1", Status: "callback", CallbackIn: 26 * time.Hour, UTCOffset: offset(3),
		CustomValues: map[string]any{"client_city": "Москва", "interests": "credit"}}
	b, err := leadBody(l, 7, "demo-x", refs, now)
	require.NoError(t, err)
	assert.Equal(t, int64(7), b.OrderID)
	assert.Equal(t, "demo-x", b.OrderCode)
	assert.Equal(t, int64(2), b.StatusID)
	assert.Equal(t, "2026-11-22T12:30:00Z", b.PlanningCallDateTime)
	assert.Equal(t, map[string]any{"20": "Москва", "26": "credit"}, b.CustomValues)

	raw, err := json.Marshal(b)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "planningCallDateTime\":\"\"")
	l.CallbackIn, l.UTCOffset, l.CustomValues = 0, nil, nil
	b, err = leadBody(l, 7, "demo-x", refs, now)
	require.NoError(t, err)
	raw, err = json.Marshal(b)
	require.NoError(t, err)
	for _, absent := range []string{"planningCallDateTime", "utcOffset", "customValues"} {
		assert.NotContains(t, string(raw), absent, "not sent: the service decides")
	}

	l.Status = "qualified"
	_, err = leadBody(l, 7, "demo-x", refs, now)
	assert.ErrorContains(t, err, `no lead status has code "qualified"`)
}

func TestSecondaryLeads(t *testing.T) {
	leads := func(phones ...string) []DemoLead {
		out := make([]DemoLead, len(phones))
		for i, p := range phones {
			out[i] = DemoLead{Phone: p}
		}
		return out
	}
	assert.Equal(t, 0, SecondaryLeads(leads("+79161234567", "+79161234568")))
	assert.Equal(t, 1, SecondaryLeads(leads("+79161234567", "+7 (916) 123-45-67", "+79990000000")))
	assert.Equal(t, 2, SecondaryLeads(leads("+79161234567", "+7 916 123-45-67", "+79161234567")))
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

func TestDemoCodesAreTheOrdersCodes(t *testing.T) {
	var codes []string
	for _, o := range DemoOrders(now) {
		codes = append(codes, o.Code)
	}
	assert.Equal(t, []string{DemoOrderCreditCards, DemoOrderCarLoans}, codes)
}
