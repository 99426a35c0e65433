package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 18 (items 5 and 6): field values a fuzzer got stored through the gateway. Each request
// is sent as it was reported and must be a 400 naming the field (data.errors and the message),
// with no row of any schema added or removed and the order and lead it aimed at unchanged.

// fuzzedRequest is one reported request and the field its refusal must name.
type fuzzedRequest struct {
	name, path string
	body       any
	field      string
}

// manyValues is a customValues object of n entries.
func manyValues(n int) map[string]any {
	out := make(map[string]any, n)
	for i := range n {
		out[strconv.Itoa(i+1)] = "x"
	}
	return out
}

func TestFuzzedFieldValuesAreRefusedAndWriteNothing(t *testing.T) {
	orderFields := orderCustomFields(t)
	leadFields := leadCustomFields(t)
	fieldID := func(fields map[string]int64, code string) string {
		require.NotZero(t, fields[code], "demo custom field %s is seeded", code)
		return strconv.FormatInt(fields[code], 10)
	}
	orderNote, orderRegions := fieldID(orderFields, "client_company"), fieldID(orderFields, "target_regions")
	leadNote, leadInterests := fieldID(leadFields, "client_city"), fieldID(leadFields, "interests")

	orderID, code := leadOrder(t, "Fuzzed fields")
	leadID := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
	inactive := createUser(t, uniqueEmail("fuzzed-inactive"), "--active=false")
	order := "/v2/order/update/" + strconv.FormatInt(orderID, 10) + "/"
	lead := strconv.FormatInt(leadID, 10)
	newOrder := minimalOrder("Fuzzed fields new")

	var requests []fuzzedRequest
	// 5. Holiday dates that are not dates, on create and on update.
	for _, d := range []string{"1e10", "2026-01-01T25:61:61Z", "yesterday", "31.12.2027 25h", "Monday, 31 December 2027"} {
		requests = append(requests,
			fuzzedRequest{"create holiday " + d, "/v2/order/create/", with(newOrder, "callHolidayOverrides", []string{d}), "callHolidayOverrides[0]"},
			fuzzedRequest{"update holiday " + d, order, map[string]any{"callHolidayOverrides": []string{"2027-01-01", d}}, "callHolidayOverrides[1]"})
	}
	// 6. Weak checks on other fields.
	requests = append(requests,
		fuzzedRequest{"transfer number not a phone", "/v2/order/create/",
			with(newOrder, "transferNumbers", []any{map[string]any{"number": "not-a-phone"}}), "transferNumbers[0].number"},
		fuzzedRequest{"10,000 sipEndpointIds", "/v2/order/create/", with(newOrder, "sipEndpointIds", repeat(1, 10_000)), "sipEndpointIds"},
		fuzzedRequest{"10,000 agentUserIds", order, map[string]any{"agentUserIds": repeat(1, 10_000)}, "agentUserIds"},
		fuzzedRequest{"10,000 agentGroupIds", order, map[string]any{"agentGroupIds": repeat(1, 10_000)}, "agentGroupIds"},
		fuzzedRequest{"10,000 transferNumbers", order, map[string]any{"transferNumbers": repeat(map[string]any{"number": "101"}, 10_000)}, "transferNumbers"},
		fuzzedRequest{"10,000 order customValues", order, map[string]any{"customValues": manyValues(10_000)}, "customValues"},
		fuzzedRequest{"10,000 lead customValues", "/v2/lead/update/" + lead + "/", map[string]any{"customValues": manyValues(10_000)}, "customValues"},
		fuzzedRequest{"10,000 API-key scopes", "/v2/api-key/create/", map[string]any{"name": "fuzzed", "scopes": repeat("leads:read", 10_000)}, "scopes"},
		fuzzedRequest{"lead v2 create messengerPhone x", "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "messengerPhone", "x"), "messengerPhone"},
		fuzzedRequest{"lead v2 update messengerPhone x", "/v2/lead/update/" + lead + "/", map[string]any{"messengerPhone": "x"}, "messengerPhone"},
		fuzzedRequest{"lead v1 update messengerPhone x", "/v1/lead/update/" + lead + "/", map[string]any{"messengerPhone": "x"}, "messengerPhone"},
		fuzzedRequest{"lead async create messengerPhone x", "/v2/lead/create-async/", with(v2Lead(orderID, code, newPhone()), "messengerPhone", "x"), "messengerPhone"},
		fuzzedRequest{"order custom string of 100,000 characters", order,
			map[string]any{"customValues": map[string]any{orderNote: strings.Repeat("x", 100_000)}}, "customValues." + orderNote},
		fuzzedRequest{"lead custom string of 100,000 characters", "/v2/lead/update/" + lead + "/",
			map[string]any{"customValues": map[string]any{leadNote: strings.Repeat("x", 100_000)}}, "customValues." + leadNote},
		fuzzedRequest{"order multiselect ,,", order, map[string]any{"customValues": map[string]any{orderRegions: ",,"}}, "customValues." + orderRegions},
		fuzzedRequest{"lead multiselect ,,", "/v2/lead/create/",
			with(v2Lead(orderID, code, newPhone()), "customValues", map[string]any{leadInterests: ",,"}), "customValues." + leadInterests},
		fuzzedRequest{"private notification to an inactive user", "/v2/notification/private/",
			map[string]any{"userId": inactive, "title": "t", "text": "x", "priority": "default", "level": "default"}, "userId"},
	)

	orderBefore, leadBefore := orderDetail(t, orderID), leadDetail(t, leadID)
	before := quietCounts(t)
	for _, req := range requests {
		r := stack.Call(t, http.MethodPost, req.path, req.body)
		t.Run(req.name, func(t *testing.T) {
			require.Equal(t, http.StatusBadRequest, r.Status, "%.300s", r.Body)
			assert.False(t, r.Env.Success)
			errs := r.Errors(t)
			require.Contains(t, errs, req.field, "%.300s", r.Body)
			assert.Contains(t, r.Env.Message, req.field+": "+errs[req.field])
		})
	}
	assert.Equal(t, before, quietCounts(t), "a refused request changed rows")
	assert.Equal(t, orderBefore, orderDetail(t, orderID), "a refused update changed the order")
	assert.Equal(t, leadBefore, leadDetail(t, leadID), "a refused update changed the lead")
}

// The same fields at their bounds are accepted: the caps refuse only what is over them.
func TestFuzzedFieldsAtTheirBoundsAreAccepted(t *testing.T) {
	orderFields := orderCustomFields(t)
	note := strconv.FormatInt(orderFields["client_company"], 10)
	id := createOrder(t, with(minimalOrder("Fields at bounds"),
		"sipEndpointIds", repeat(1, 100),
		"transferNumbers", []any{map[string]any{"number": "+74951234567"}, map[string]any{"number": "101"}},
		"callHolidayOverrides", []string{"31 декабря 2027 г.", "2027-1-2", "Fri, 31 Dec 2027 10:00:00 GMT", "08.03.2027"},
		"customValues", map[string]any{note: strings.Repeat("я", 1000)}))
	d := orderDetail(t, id)
	assert.Equal(t, []any{float64(1)}, d["sipEndpointIds"], "repeats dropped")
	assert.Equal(t, []any{"02.01.2027", "08.03.2027", "31.12.2027"}, d["callHolidayOverrides"])
	assert.Equal(t, strings.Repeat("я", 1000), d["customValues"].(map[string]any)[note])

	orderID, code := leadOrder(t, "Lead fields at bounds")
	leadID := createLead(t, "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "messengerPhone", "+7 (916) 765-43-21"))
	assert.Equal(t, "+79167654321", leadDetail(t, leadID)["messengerPhone"], "normalised like phone")
}
