package demo

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

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

// TestDemoOrdersAreRealistic checks the orders on their own. That their agents are active users
// of the call-center groups and their agent groups exist is checked against the user service's
// demo data, as user-admin seed loads it: TestDemoOrdersNameTheUserServicesDemoData in
// tools/internal/seed, and gateway/e2e/demo_test.go.
func TestDemoOrdersAreRealistic(t *testing.T) {
	orders := Orders(now)
	require.Len(t, orders, 2)
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
		checkValues(t, OrderCustomFields(), o.CustomValues)
		assert.Len(t, o.CustomValues, len(OrderCustomFields()), "a value of every order field")

		require.NotEmpty(t, o.AgentEmails)
		for _, e := range o.AgentEmails {
			assert.True(t, strings.HasSuffix(e, "@demo.callcenter.local"), "%s is a demo user's address", e)
		}
		require.NotEmpty(t, o.AgentGroupNames)
		assert.NotEmpty(t, o.SipEndpointIDs)

		checkLeads(t, o)
	}
}

func checkLeads(t *testing.T, o Order) {
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
		checkValues(t, LeadCustomFields(), l.CustomValues)
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
	h := Orders(time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC))[0].Holidays
	assert.Contains(t, h, "09.05.2031")
	assert.Contains(t, h, "01.01.2032")
	assert.NotContains(t, strings.Join(h, " "), "2030")
}

func TestSecondaryLeads(t *testing.T) {
	leads := func(phones ...string) []Lead {
		out := make([]Lead, len(phones))
		for i, p := range phones {
			out[i] = Lead{Phone: p}
		}
		return out
	}
	assert.Equal(t, 0, SecondaryLeads(leads("+79161234567", "+79161234568")))
	assert.Equal(t, 1, SecondaryLeads(leads("+79161234567", "+7 (916) 123-45-67", "+79990000000")))
	assert.Equal(t, 2, SecondaryLeads(leads("+79161234567", "+7 916 123-45-67", "+79161234567")))
}

func TestDemoCodesAreTheOrdersCodes(t *testing.T) {
	var codes []string
	for _, o := range Orders(now) {
		codes = append(codes, o.Code)
	}
	assert.Equal(t, []string{OrderCreditCards, OrderCarLoans}, codes)
}
