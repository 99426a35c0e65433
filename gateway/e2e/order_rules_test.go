package e2e

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertFieldError checks a 400 validation envelope that names field (a key of data.errors
// starting with field) in its message.
func assertFieldError(t *testing.T, r Response, field string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.False(t, r.Env.Success)
	errs := r.Errors(t)
	var key string
	for k := range errs {
		if k == field || strings.HasPrefix(k, field+"[") || strings.HasPrefix(k, field+".") {
			key = k
		}
	}
	require.NotEmpty(t, key, "no error for %s in %s", field, r.Body)
	assert.Contains(t, r.Env.Message, key+": "+errs[key])
}

// repeat is n copies of v, for arrays over a bound.
func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func with(base map[string]any, kv ...any) map[string]any {
	out := maps.Clone(base)
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func without(base map[string]any, key string) map[string]any {
	out := maps.Clone(base)
	delete(out, key)
	return out
}

func TestOrderCreateRejectsEveryBrokenRuleAndChangesNothing(t *testing.T) {
	fields := orderCustomFields(t)
	id := func(code string) string {
		require.NotZero(t, fields[code], "demo custom field %s is seeded", code)
		return strconv.FormatInt(fields[code], 10)
	}
	base := minimalOrder("Rules")
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"serviceTitle missing", without(base, "serviceTitle"), "serviceTitle"},
		{"title missing", without(base, "title"), "title"},
		{"status missing", without(base, "status"), "status"},
		{"sipEndpointIds missing", without(base, "sipEndpointIds"), "sipEndpointIds"},
		{"title empty", with(base, "title", "  "), "title"},
		{"status unknown", with(base, "status", "done"), "status"},
		{"callRecordRule unknown", with(base, "callRecordRule", "always"), "callRecordRule"},
		{"sipEndpointUsageScheme unknown", with(base, "sipEndpointUsageScheme", "round_robin"), "sipEndpointUsageScheme"},
		{"agentLeadEditMode unknown", with(base, "agentLeadEditMode", "sometimes"), "agentLeadEditMode"},
		{"aiDefaultLanguage unknown", with(base, "aiDefaultLanguage", "xx"), "aiDefaultLanguage"},
		{"sipEndpointIds empty", with(base, "sipEndpointIds", []int{}), "sipEndpointIds"},
		{"sipEndpointIds zero", with(base, "sipEndpointIds", []int{0}), "sipEndpointIds"},
		{"callAttemptGroupId below 1", with(base, "callAttemptGroupId", 0), "callAttemptGroupId"},
		{"callScenarioId below 1", with(base, "callScenarioId", 0), "callScenarioId"},
		{"qualifiedLeadsPerDayLimit below 1", with(base, "qualifiedLeadsPerDayLimit", 0), "qualifiedLeadsPerDayLimit"},
		{"callAttemptGroupId unknown", with(base, "callAttemptGroupId", 987654321), "callAttemptGroupId"},
		{"agentUserIds unknown", with(base, "agentUserIds", []int{987654321}), "agentUserIds"},
		{"agentUserIds zero", with(base, "agentUserIds", []int{0}), "agentUserIds"},
		{"code with spaces", with(base, "code", "bad code"), "code"},
		{"code upper case", with(base, "code", "Upper"), "code"},
		{"code Cyrillic", with(base, "code", "заказ"), "code"},
		{"callSchedule over 7 days", with(base, "callSchedule", [][]string{{}, {}, {}, {}, {}, {}, {}, {}}), "callSchedule"},
		{"callSchedule start after end", with(base, "callSchedule", [][]string{{"18:00", "09:00"}}), "callSchedule"},
		{"callSchedule bad time", with(base, "callSchedule", [][]string{{"09:00", "25:61"}}), "callSchedule"},
		{"callSchedule one time", with(base, "callSchedule", [][]string{{"09:00"}}), "callSchedule"},
		{"callHolidayOverrides not a date", with(base, "callHolidayOverrides", []string{"2027-01-07", "someday soon-ish"}), "callHolidayOverrides"},
		{"transferNumbers without number", with(base, "transferNumbers", []any{map[string]any{"names": map[string]string{"ru": "Отдел"}}}), "transferNumbers"},
		{"transferNumbers number with spaces", with(base, "transferNumbers", []any{map[string]any{"number": "+7 999 000"}}), "transferNumbers"},
		{"transferNumbers not a phone", with(base, "transferNumbers", []any{map[string]any{"number": "not-a-phone"}}), "transferNumbers"},
		{"transferNumbers not a valid number", with(base, "transferNumbers", []any{map[string]any{"number": "+10000000000"}}), "transferNumbers"},
		{"transferNumbers over 100", with(base, "transferNumbers", repeat(map[string]any{"number": "101"}, 101)), "transferNumbers"},
		{"sipEndpointIds over 100", with(base, "sipEndpointIds", repeat(1, 101)), "sipEndpointIds"},
		{"sipEndpointIds beyond 32 bits", with(base, "sipEndpointIds", []int64{2147483648}), "sipEndpointIds"},
		{"agentUserIds over 100", with(base, "agentUserIds", repeat(1, 101)), "agentUserIds"},
		{"agentGroupIds over 100", with(base, "agentGroupIds", repeat(1, 101)), "agentGroupIds"},
		{"callHolidayOverrides a number", with(base, "callHolidayOverrides", []string{"1e10"}), "callHolidayOverrides"},
		{"callHolidayOverrides impossible time", with(base, "callHolidayOverrides", []string{"2026-01-01T25:61:61Z"}), "callHolidayOverrides"},
		{"callHolidayOverrides relative", with(base, "callHolidayOverrides", []string{"yesterday"}), "callHolidayOverrides"},
		{"customValues multiselect empty items", with(base, "customValues", map[string]any{id("target_regions"): ",,"}), "customValues"},
		{"customValues unknown field", with(base, "customValues", map[string]any{"987654321": "x"}), "customValues"},
		{"customValues integer field given text", with(base, "customValues", map[string]any{id("monthly_lead_target"): "many"}), "customValues"},
		{"customValues select outside options", with(base, "customValues", map[string]any{id("industry"): "piracy"}), "customValues"},
		{"customValues multiselect outside options", with(base, "customValues", map[string]any{id("target_regions"): "kazan,atlantis"}), "customValues"},
		{"title not a string", with(base, "title", 5), "title"},
		{"autoDialingEnabled not a bool", with(base, "autoDialingEnabled", "yes"), "autoDialingEnabled"},
		{"sipEndpointIds not an array", with(base, "sipEndpointIds", "1"), "sipEndpointIds"},
	}
	before := createOrder(t, minimalOrder("Before the rules"))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertFieldError(t, stack.Call(t, http.MethodPost, "/v2/order/create/", c.body), c.field)
		})
	}
	for name, body := range map[string]string{"malformed": `{"title":`, "empty": ``, "array": `[1]`} {
		r := stack.Call(t, http.MethodPost, "/v2/order/create/", body)
		assertFieldError(t, r, "body")
		_ = name
	}
	r := stack.Call(t, http.MethodPost, "/v2/order/create/", `title=x`, WithHeader("Content-Type", "application/x-www-form-urlencoded"))
	assert.Equal(t, http.StatusUnsupportedMediaType, r.Status)
	assert.False(t, r.Env.Success)

	after := createOrder(t, minimalOrder("After the rules"))
	assert.Equal(t, before+1, after, "no refused request created an order")
}

func TestOrderCreateAppliesDefaultsAndIgnoresServerOwnedAndUnknownFields(t *testing.T) {
	body := with(minimalOrder("Defaults"),
		"createdAt", "2000-01-01T00:00:00+00:00", "updatedAt", "2000-01-01T00:00:00+00:00",
		"createdBy", 424242, "updatedBy", 424242, "id", 1, "colour", "purple")
	start := time.Now().Add(-time.Minute)
	d := orderDetail(t, createOrder(t, body))
	assert.Equal(t, "defaults", d["code"])
	assert.Equal(t, false, d["autoDialingEnabled"])
	assert.Equal(t, "client_is_connected", d["callRecordRule"])
	assert.Equal(t, "random_default", d["sipEndpointUsageScheme"])
	assert.Equal(t, "never", d["agentLeadEditMode"])
	assert.Equal(t, []any{}, d["agentUserIds"])
	assert.Equal(t, []any{}, d["agentGroupIds"])
	assert.Equal(t, []any{}, d["callHolidayOverrides"])
	assert.Equal(t, []any{}, d["transferNumbers"])
	assert.Equal(t, []any{}, d["customValues"], "an empty map is returned as []")
	assert.Equal(t, []any{[]any{}, []any{}, []any{}, []any{}, []any{}, []any{}, []any{}}, d["callSchedule"])
	assert.Nil(t, d["aiDefaultLanguage"])
	assert.Nil(t, d["qualifiedLeadsPerDayLimit"])
	assert.NotContains(t, d, "colour")
	created, err := time.Parse(time.RFC3339, d["createdAt"].(string))
	require.NoError(t, err)
	assert.True(t, created.After(start), "createdAt is the server's, not the client's")
	assert.NotEqual(t, float64(424242), d["createdBy"])
	assert.NotEqual(t, float64(424242), d["updatedBy"])
}

func TestOrderCodesAreGeneratedUniqueFromCyrillicTitles(t *testing.T) {
	a := orderDetail(t, createOrder(t, minimalOrder("Съёмка объявлений")))
	b := orderDetail(t, createOrder(t, minimalOrder("Съёмка объявлений")))
	assert.Equal(t, "siomka-obiavlenii", a["code"])
	assert.Equal(t, "siomka-obiavlenii-2", b["code"])

	r := stack.Call(t, http.MethodPost, "/v2/order/create/", with(minimalOrder("Dup code"), "code", "siomka-obiavlenii"))
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.False(t, r.Env.Success)
	assert.Contains(t, r.Env.Message, "code")
}

func TestOrderUpdateIsPartialAndNullClearsOnlyNullableFields(t *testing.T) {
	r := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", map[string]any{"title": "Update group", "intervals": []int{10}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	group := r.Data(t)["id"]
	full := with(minimalOrder("Full order"),
		"aiDefaultLanguage", "ru", "qualifiedLeadsPerDayLimit", 40, "callAttemptGroupId", group, "callScenarioId", 3,
		"autoDialingEnabled", true, "predictiveModeEnabled", true, "amdDetectionEnabled", true,
		"callRecordRule", "agent_is_connected", "sipEndpointUsageScheme", "even_loaded_daily",
		"showLeadContactsToAgent", true, "leadTransformEnabled", true, "speechRecognitionEnabled", true,
		"ignoreLeadTimezone", true, "agentLeadCreationIsAllowed", true, "agentLeadEditMode", "during-call",
		"autoProcessCall", true, "sipEndpointIds", []int{3, 4}, "callHolidayOverrides", []string{"March 8, 2027"},
		"callSchedule", [][]string{{"09:00", "18:00"}, {"10:00", "17:30"}},
		"transferNumbers", []any{map[string]any{"number": "+79991234567", "names": map[string]string{"ru": "Отдел продаж", "gb": "Sales"}}})
	id := createOrder(t, full)
	path := "/v2/order/update/" + strconv.FormatInt(id, 10) + "/"
	before := orderDetail(t, id)
	assert.Equal(t, []any{"08.03.2027"}, before["callHolidayOverrides"])

	r = stack.Call(t, http.MethodPost, path, map[string]any{"serviceTitle": "renamed only"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, `[]`, string(r.Env.Data))
	after := orderDetail(t, id)
	for k, v := range before {
		switch k {
		case "serviceTitle":
			assert.Equal(t, "renamed only", after[k])
		case "updatedAt", "updatedBy":
		default:
			assert.Equal(t, v, after[k], "unsent field %s keeps its value", k)
		}
	}

	r = stack.Call(t, http.MethodPost, path, map[string]any{
		"aiDefaultLanguage": nil, "qualifiedLeadsPerDayLimit": nil, "callAttemptGroupId": nil, "callScenarioId": nil,
	})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	cleared := orderDetail(t, id)
	for _, k := range []string{"aiDefaultLanguage", "qualifiedLeadsPerDayLimit", "callAttemptGroupId", "callScenarioId"} {
		assert.Nil(t, cleared[k], k)
	}

	for _, k := range []string{"title", "status", "sipEndpointIds", "autoDialingEnabled", "callRecordRule"} {
		assertFieldError(t, stack.Call(t, http.MethodPost, path, map[string]any{k: nil}), k)
	}
	assertFieldError(t, stack.Call(t, http.MethodPost, path, map[string]any{"sipEndpointIds": []int{}}), "sipEndpointIds")
	assertFieldError(t, stack.Call(t, http.MethodPost, path, map[string]any{"status": "bogus", "title": "changed"}), "status")
	r = stack.Call(t, http.MethodPost, path, map[string]any{"createdAt": "2000-01-01T00:00:00+00:00", "createdBy": 424242, "colour": "red"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	final := orderDetail(t, id)
	assert.Equal(t, cleared["createdAt"], final["createdAt"])
	assert.Equal(t, cleared["createdBy"], final["createdBy"])
	assert.Equal(t, cleared["title"], final["title"], "a refused update changed nothing")

	other := createOrder(t, minimalOrder("Other code holder"))
	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(other, 10)+"/", map[string]any{"code": final["code"]})
	assert.Equal(t, http.StatusConflict, r.Status)
}

func TestOrderPathIDs(t *testing.T) {
	for _, p := range []string{"/v2/order/detail/0/", "/v2/order/detail/-1/", "/v2/order/detail/abc/"} {
		r := stack.Call(t, http.MethodGet, p, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, p)
		assert.False(t, r.Env.Success)
	}
	assert.Equal(t, http.StatusNotFound, stack.Call(t, http.MethodGet, "/v2/order/detail/987654321/", nil).Status)
	assert.Equal(t, http.StatusNotFound, stack.Call(t, http.MethodPost, "/v2/order/update/987654321/", map[string]any{"title": "x"}).Status)
	assert.Equal(t, http.StatusBadRequest, stack.Call(t, http.MethodPost, "/v2/order/update/abc/", map[string]any{"title": "x"}).Status)
}

func TestCallAttemptGroupRules(t *testing.T) {
	base := map[string]any{"title": "Intervals", "intervals": []int{5, 30, 120}}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{without(base, "title"), "title"},
		{with(base, "title", ""), "title"},
		{without(base, "intervals"), "intervals"},
		{with(base, "intervals", []int{}), "intervals"},
		{with(base, "intervals", []int{5, 0}), "intervals"},
		{with(base, "intervals", []string{"5"}), "intervals"},
		{with(base, "isDefault", "yes"), "isDefault"},
		{with(base, "resetAttemptsEnabled", 1), "resetAttemptsEnabled"},
	} {
		assertFieldError(t, stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", c.body), c.field)
	}

	r := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", with(base, "isDefault", true), WithHeader("Idempotency-Key", "e2e-default-group"))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	group := r.Data(t)["id"]
	// A new order without a group gets the default one.
	d := orderDetail(t, createOrder(t, minimalOrder("Default group user")))
	assert.Equal(t, group, d["callAttemptGroupId"])

	replay := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", with(base, "isDefault", true), WithHeader("Idempotency-Key", "e2e-default-group"))
	assert.Equal(t, group, replay.Data(t)["id"])
	assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	reused := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", with(base, "title", "other"), WithHeader("Idempotency-Key", "e2e-default-group"))
	assert.Equal(t, http.StatusConflict, reused.Status)
	assert.False(t, reused.Env.Success)
}

func TestOrderIdempotencyKeyReusedWithAnotherBodyIs409(t *testing.T) {
	key := WithHeader("Idempotency-Key", "e2e-order-409")
	id := createOrder(t, minimalOrder("Idempotent A"), key)
	r := stack.Call(t, http.MethodPost, "/v2/order/create/", minimalOrder("Idempotent A"), key)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, float64(id), r.Data(t)["id"], "replayed, not created again")
	r = stack.Call(t, http.MethodPost, "/v2/order/create/", minimalOrder("Idempotent B"), key)
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Contains(t, r.Env.Message, "Idempotency-Key")
}
