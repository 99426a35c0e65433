package order_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/customfield"
	"ccplatform/pkg/event"
	"ccplatform/services/order/internal/callattempt"
	"ccplatform/services/order/internal/order"
	"ccplatform/services/order/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "order_order", func(e *servicetest.Env) { env = e })
}

// body is a valid create body with a unique title, plus extra fields.
func body(t *testing.T, extra map[string]any) map[string]any {
	b := map[string]any{
		"serviceTitle":   "internal " + t.Name(),
		"title":          "Order " + t.Name(),
		"status":         "success",
		"sipEndpointIds": []int{1},
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func create(t *testing.T, b any) int64 {
	t.Helper()
	res := env.Do(t, http.MethodPost, "/v2/order/create/", b)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	require.True(t, res.Success)
	assert.Equal(t, "", res.Message)
	return res.ID()
}

func detail(t *testing.T, id int64) map[string]any {
	t.Helper()
	res := env.Do(t, http.MethodGet, fmt.Sprintf("/v2/order/detail/%d/", id), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var v map[string]any
	require.NoError(t, json.Unmarshal(res.Data, &v))
	return v
}

func update(t *testing.T, id int64, b any) servicetest.Response {
	t.Helper()
	return env.Do(t, http.MethodPost, fmt.Sprintf("/v2/order/update/%d/", id), b)
}

func field(t *testing.T, code, typ string, options ...string) int64 {
	t.Helper()
	id, err := customfield.NewStore(env.DB).Upsert(context.Background(), customfield.Field{Code: code, Name: code, Type: typ, Options: options})
	require.NoError(t, err)
	return id
}

func group(t *testing.T, isDefault bool) int64 {
	t.Helper()
	id, err := callattempt.NewStore(env.DB).Create(context.Background(), callattempt.Group{Title: t.Name(), Intervals: []int64{5}, IsDefault: isDefault}, nil)
	require.NoError(t, err)
	return id
}

func TestCreateMinimalGetsDefaults(t *testing.T) {
	id := create(t, map[string]any{"serviceTitle": "svc", "title": "Заказ 1", "status": "info", "sipEndpointIds": []int{3}})
	v := detail(t, id)
	assert.EqualValues(t, id, v["id"])
	assert.Regexp(t, `^zakaz-1(-\d+)?$`, v["code"])
	assert.Equal(t, "svc", v["serviceTitle"])
	assert.Equal(t, "Заказ 1", v["title"])
	assert.Equal(t, []any{[]any{}, []any{}, []any{}, []any{}, []any{}, []any{}, []any{}}, v["callSchedule"])
	assert.Equal(t, []any{}, v["callHolidayOverrides"])
	for _, b := range []string{"autoDialingEnabled", "predictiveModeEnabled", "amdDetectionEnabled", "showLeadContactsToAgent",
		"leadTransformEnabled", "speechRecognitionEnabled", "ignoreLeadTimezone", "agentLeadCreationIsAllowed", "autoProcessCall"} {
		assert.Equal(t, false, v[b], b)
	}
	assert.Nil(t, v["aiDefaultLanguage"])
	assert.Nil(t, v["qualifiedLeadsPerDayLimit"])
	assert.Nil(t, v["callScenarioId"])
	assert.Equal(t, "client_is_connected", v["callRecordRule"])
	assert.Equal(t, "random_default", v["sipEndpointUsageScheme"])
	assert.Equal(t, "never", v["agentLeadEditMode"])
	assert.Equal(t, []any{}, v["agentUserIds"])
	assert.Equal(t, []any{}, v["agentGroupIds"])
	assert.Equal(t, []any{3.0}, v["sipEndpointIds"])
	assert.Equal(t, []any{}, v["customValues"])
	assert.Equal(t, []any{}, v["transferNumbers"])
	assert.Equal(t, "info", v["status"])
	assert.EqualValues(t, 7, v["createdBy"])
	assert.EqualValues(t, 7, v["updatedBy"])
	created, err := time.Parse(time.RFC3339, v["createdAt"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), created, time.Minute)
	assert.Regexp(t, `\+00:00$`, v["createdAt"])
}

func TestCreateFullRoundTrip(t *testing.T) {
	g := group(t, false)
	color := field(t, "rt_color", customfield.TypeMultiselect, "red", "green", "blue")
	size := field(t, "rt_size", customfield.TypeInteger)
	id := create(t, map[string]any{
		"code":                       "full-order_1",
		"serviceTitle":               "svc",
		"title":                      "Full",
		"callSchedule":               [][]string{{"09:00", "18:00"}, {}, {"10:00", "24:00"}},
		"callHolidayOverrides":       []string{"2027-01-07", "01.01.2027", "31 декабря 2027"},
		"autoDialingEnabled":         true,
		"predictiveModeEnabled":      true,
		"aiDefaultLanguage":          "gb",
		"amdDetectionEnabled":        true,
		"callRecordRule":             "agent_is_connected",
		"sipEndpointUsageScheme":     "even_loaded_daily",
		"agentUserIds":               []int{},
		"agentGroupIds":              []int{}, // needs no user service (groups: TestAgentGroupsNeedTheUserService)
		"showLeadContactsToAgent":    true,
		"callAttemptGroupId":         g,
		"qualifiedLeadsPerDayLimit":  50,
		"callScenarioId":             9,
		"leadTransformEnabled":       true,
		"status":                     "secondary",
		"speechRecognitionEnabled":   true,
		"ignoreLeadTimezone":         true,
		"sipEndpointIds":             []int{5, 6},
		"customValues":               map[string]any{strconv.FormatInt(color, 10): "blue, red", strconv.FormatInt(size, 10): 42},
		"agentLeadCreationIsAllowed": true,
		"agentLeadEditMode":          "during-call",
		"autoProcessCall":            true,
		"transferNumbers":            []any{map[string]any{"number": "+79990001122", "names": map[string]string{"ru": "Отдел", "gb": "Sales"}}, map[string]any{"number": "100"}},
		"createdAt":                  "2000-01-01T00:00:00Z", // read-only: ignored
		"createdBy":                  99,
		"unknownField":               true,
	})
	v := detail(t, id)
	want := map[string]any{
		"code":                       "full-order_1",
		"callSchedule":               []any{[]any{"09:00", "18:00"}, []any{}, []any{"10:00", "24:00"}, []any{}, []any{}, []any{}, []any{}},
		"callHolidayOverrides":       []any{"01.01.2027", "07.01.2027", "31.12.2027"},
		"aiDefaultLanguage":          "gb",
		"callRecordRule":             "agent_is_connected",
		"sipEndpointUsageScheme":     "even_loaded_daily",
		"agentUserIds":               []any{},
		"agentGroupIds":              []any{},
		"callAttemptGroupId":         float64(g),
		"qualifiedLeadsPerDayLimit":  50.0,
		"callScenarioId":             9.0,
		"status":                     "secondary",
		"sipEndpointIds":             []any{5.0, 6.0},
		"customValues":               map[string]any{strconv.FormatInt(color, 10): "blue,red", strconv.FormatInt(size, 10): 42.0},
		"agentLeadEditMode":          "during-call",
		"transferNumbers":            []any{map[string]any{"number": "+79990001122", "names": map[string]any{"ru": "Отдел", "gb": "Sales"}}, map[string]any{"number": "100", "names": []any{}}},
		"createdBy":                  7.0,
		"autoDialingEnabled":         true,
		"ignoreLeadTimezone":         true,
		"agentLeadCreationIsAllowed": true,
	}
	for k, w := range want {
		assert.Equal(t, w, v[k], k)
	}
	assert.NotContains(t, v, "unknownField")
	assert.NotEqual(t, "2000-01-01T00:00:00+00:00", v["createdAt"])

	// The internal read gives the same view to other services, with the call-attempt group.
	internal := internalDetail(t, id)
	assert.Equal(t, map[string]any{"id": float64(g), "intervals": []any{5.0}, "resetAttemptsEnabled": false}, internal["callAttemptGroup"])
	delete(internal, "callAttemptGroup")
	assert.Equal(t, v, internal)
	assert.NotContains(t, v, "callAttemptGroup", "the public detail keeps to the contract")
}

func internalDetail(t *testing.T, id int64) map[string]any {
	t.Helper()
	res := env.Do(t, http.MethodGet, fmt.Sprintf("/internal/orders/%d", id), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var v map[string]any
	require.NoError(t, json.Unmarshal(res.Data, &v))
	return v
}

func TestInternalReadCarriesTheCallAttemptGroup(t *testing.T) {
	g, err := callattempt.NewStore(env.DB).Create(context.Background(),
		callattempt.Group{Title: t.Name(), Intervals: []int64{10, 60, 1440}, ResetAttemptsEnabled: true}, nil)
	require.NoError(t, err)
	with := internalDetail(t, create(t, body(t, map[string]any{"callAttemptGroupId": g})))
	assert.Equal(t, map[string]any{"id": float64(g), "intervals": []any{10.0, 60.0, 1440.0}, "resetAttemptsEnabled": true}, with["callAttemptGroup"])

	without := internalDetail(t, create(t, body(t, map[string]any{"title": "No group " + t.Name(), "callAttemptGroupId": nil})))
	assert.Contains(t, without, "callAttemptGroup")
	assert.Nil(t, without["callAttemptGroup"], "an order without a group says so")
}

func TestGeneratedCodes(t *testing.T) {
	b := body(t, map[string]any{"title": "Заказ Подъезд"})
	first := detail(t, create(t, b))["code"]
	second := detail(t, create(t, b))["code"]
	third := detail(t, create(t, b))["code"]
	assert.Equal(t, "zakaz-podezd", first)
	assert.Equal(t, "zakaz-podezd-2", second)
	assert.Equal(t, "zakaz-podezd-3", third)

	assert.Equal(t, "order", detail(t, create(t, body(t, map[string]any{"title": "!!!", "code": ""})))["code"])
}

func TestGeneratedCodesUnderConcurrency(t *testing.T) {
	const n = 10
	b := body(t, map[string]any{"title": "Race Title"})
	var wg sync.WaitGroup
	ids := make([]int64, n)
	for i := range n {
		wg.Go(func() {
			res := env.Do(t, http.MethodPost, "/v2/order/create", b)
			if assert.Equal(t, http.StatusOK, res.Status, res.Message) {
				ids[i] = res.ID()
			}
		})
	}
	wg.Wait()
	codes := map[any]bool{}
	for _, id := range ids {
		codes[detail(t, id)["code"]] = true
	}
	assert.Len(t, codes, n, "every order got its own code")
	assert.True(t, codes["race-title"])
}

func TestExplicitCode(t *testing.T) {
	create(t, body(t, map[string]any{"code": "taken-code"}))
	res := env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"code": "taken-code"}))
	assert.Equal(t, http.StatusConflict, res.Status)
	assert.Equal(t, "code: is already used by another order", res.Message)
	assert.Contains(t, res.Errors(), "code")

	res = env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"code": "Not Valid"}))
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "code")
}

func TestCreateReportsEveryBrokenField(t *testing.T) {
	res := env.Do(t, http.MethodPost, "/v2/order/create", map[string]any{
		"title":                "t",
		"status":               "pending",
		"sipEndpointIds":       []int{},
		"callHolidayOverrides": []string{"2027-01-01", "2027-01-02", "not a date"},
		"callSchedule":         [][]string{{"18:00", "09:00"}},
		"aiDefaultLanguage":    "fr",
		"callAttemptGroupId":   999999,
		"customValues":         map[string]any{"999999": "x"},
		"transferNumbers":      []any{map[string]any{"number": "1 2", "names": map[string]string{"xx": "n"}}},
	})
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.False(t, res.Success)
	assert.Equal(t, map[string]string{
		"serviceTitle":              "is required",
		"status":                    "must be one of: success, secondary, info",
		"sipEndpointIds":            "must not be empty",
		"callHolidayOverrides[2]":   "must be a recognizable date such as 31.12.2027 or 2027-12-31",
		"callSchedule[0]":           "must start before it ends",
		"aiDefaultLanguage":         "must be one of the available languages: gb, ru (or null)",
		"callAttemptGroupId":        "no call-attempt group has id 999999",
		"customValues.999999":       "no order custom field has id 999999",
		"transferNumbers[0].number": "must not contain spaces",
		"transferNumbers[0].names":  "keys must be one of the available languages: gb, ru",
	}, res.Errors())
	assert.Contains(t, res.Message, "callHolidayOverrides[2]: must be a recognizable date")
}

func TestCreateWrongJSON(t *testing.T) {
	cases := map[string]struct{ body, message string }{
		"wrong type":     {`{"title": 5}`, "title: must be a string"},
		"int as float":   {`{"callAttemptGroupId": 1.5}`, "callAttemptGroupId: must be an integer"},
		"id as string":   {`{"sipEndpointIds": ["1"]}`, "sipEndpointIds[0]: must be an integer"},
		"malformed":      {`{"title": `, "body: malformed JSON: unexpected end"},
		"not an object":  {`[]`, "body: must be a JSON object"},
		"bool as string": {`{"autoDialingEnabled": "yes"}`, "autoDialingEnabled: must be a boolean"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := env.Do(t, http.MethodPost, "/v2/order/create", tc.body)
			assert.Equal(t, http.StatusBadRequest, res.Status)
			assert.Equal(t, tc.message, res.Message)
		})
	}
	res := env.Do(t, http.MethodPost, "/v2/order/create", `{}`, "Content-Type", "text/plain")
	assert.Equal(t, http.StatusUnsupportedMediaType, res.Status)
}

func TestCustomValueTypes(t *testing.T) {
	color := strconv.FormatInt(field(t, "cv_color", customfield.TypeSelect, "red", "green"), 10)
	when := strconv.FormatInt(field(t, "cv_when", customfield.TypeDate), 10)
	res := env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{
		"customValues": map[string]any{color: "pink", when: "31.12.2027"},
	}))
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{
		"customValues." + color: "must be one of: red, green",
		"customValues." + when:  "must be a date yyyy-mm-dd",
	}, res.Errors())
}

// Issue 18: a multiselect ",," was stored as "" and a 100,000-character string value was stored.
// Both are refused, naming the value, and no order is written.
func TestCustomValuesRefusedWriteNothing(t *testing.T) {
	regions := strconv.FormatInt(field(t, "cv_regions", customfield.TypeMultiselect, "msk", "spb"), 10)
	note := strconv.FormatInt(field(t, "cv_note", customfield.TypeString), 10)
	var before int
	require.NoError(t, env.DB.Get(&before, "SELECT count(*) FROM orders"))
	for value, want := range map[string]map[string]string{
		",,":   {"customValues." + regions: "must be a string of comma-separated values of: msk, spb"},
		"msk,": {"customValues." + regions: "must be a string of comma-separated values of: msk, spb"},
	} {
		res := env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"customValues": map[string]any{regions: value}}))
		require.Equal(t, http.StatusBadRequest, res.Status, value)
		assert.Equal(t, want, res.Errors(), value)
	}
	res := env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"customValues": map[string]any{note: strings.Repeat("x", 100_000)}}))
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{"customValues." + note: "must be at most 1000 characters"}, res.Errors())
	var after int
	require.NoError(t, env.DB.Get(&after, "SELECT count(*) FROM orders"))
	assert.Equal(t, before, after, "nothing written")
}

func TestDefaultCallAttemptGroup(t *testing.T) {
	def := group(t, true)
	id := create(t, body(t, nil))
	assert.Equal(t, float64(def), detail(t, id)["callAttemptGroupId"], "an unsent group is the default group")

	id = create(t, body(t, map[string]any{"callAttemptGroupId": nil}))
	assert.Nil(t, detail(t, id)["callAttemptGroupId"], "an explicit null is no group")
}

func TestAgentUsersNeedTheUserService(t *testing.T) {
	// The user service is unreachable in these tests: checking agents is impossible, so 503.
	res := env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"agentUserIds": []int{1, 2}}))
	assert.Equal(t, http.StatusServiceUnavailable, res.Status)
	assert.False(t, res.Success)
	assert.Contains(t, res.Message, "agentUserIds")
	assert.Equal(t, "[]", string(res.Data))

	// Plain mistakes in the body still come back as a 400 first.
	res = env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"agentUserIds": []int{1}, "status": "x"}))
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "status")

	// An empty list needs no check.
	create(t, body(t, map[string]any{"agentUserIds": []int{}}))

	id := create(t, body(t, nil))
	res = update(t, id, map[string]any{"agentUserIds": []int{3}})
	assert.Equal(t, http.StatusServiceUnavailable, res.Status)
}

func TestAgentGroupsNeedTheUserService(t *testing.T) {
	// Agent groups live in the user service, unreachable here: the check is impossible, so 503.
	// Checks against the real service are in gateway/e2e (unknown ids are a 400 there).
	res := env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"agentGroupIds": []int{4, 2, 4}}))
	assert.Equal(t, http.StatusServiceUnavailable, res.Status)
	assert.False(t, res.Success)
	assert.Equal(t, "agentGroupIds: cannot be checked now, the user service is unavailable", res.Message)
	assert.Equal(t, "[]", string(res.Data))

	// Plain mistakes in the body still come back as a 400 first, the ids' own rule among them.
	res = env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"agentGroupIds": []int{1}, "status": "x"}))
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "status")
	res = env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"agentGroupIds": []int{0}}))
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "agentGroupIds")

	// An empty list needs no check, on create and on update.
	id := create(t, body(t, map[string]any{"agentGroupIds": []int{}}))
	res = update(t, id, map[string]any{"agentGroupIds": []int{}})
	assert.Equal(t, http.StatusOK, res.Status)

	res = update(t, id, map[string]any{"agentGroupIds": []int{3}})
	assert.Equal(t, http.StatusServiceUnavailable, res.Status)
	assert.Equal(t, []any{}, detail(t, id)["agentGroupIds"], "a refused update changes nothing")
}

func TestUpdateIsPartial(t *testing.T) {
	g := group(t, false)
	id := create(t, body(t, map[string]any{
		"code": "partial-1", "aiDefaultLanguage": "ru", "qualifiedLeadsPerDayLimit": 10, "callScenarioId": 3,
		"callAttemptGroupId": g, "autoDialingEnabled": true, "sipEndpointIds": []int{1, 2},
	}))
	before := detail(t, id)

	res := env.Do(t, http.MethodPost, fmt.Sprintf("/v2/order/update/%d", id), map[string]any{
		"title": "Renamed", "autoDialingEnabled": false, "aiDefaultLanguage": nil, "qualifiedLeadsPerDayLimit": nil,
		"createdAt": "2000-01-01T00:00:00Z", "updatedBy": 1234, "createdBy": 1234,
	}, "X-User-Id", "42")
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.True(t, res.Success)
	assert.Equal(t, "[]", string(res.Data))

	after := detail(t, id)
	assert.Equal(t, "Renamed", after["title"])
	assert.Equal(t, false, after["autoDialingEnabled"])
	assert.Nil(t, after["aiDefaultLanguage"])
	assert.Nil(t, after["qualifiedLeadsPerDayLimit"])
	assert.EqualValues(t, 42, after["updatedBy"])
	assert.EqualValues(t, 7, after["createdBy"])
	assert.Equal(t, before["createdAt"], after["createdAt"])
	var updatedLater bool
	require.NoError(t, env.DB.Get(&updatedLater, `SELECT updated_at > created_at FROM orders WHERE id = $1`, id))
	assert.True(t, updatedLater)
	for _, kept := range []string{"code", "serviceTitle", "status", "sipEndpointIds", "callScenarioId", "callAttemptGroupId", "callSchedule"} {
		assert.Equal(t, before[kept], after[kept], kept)
	}

	// Null clears the other nullable fields.
	res = update(t, id, map[string]any{"callScenarioId": nil, "callAttemptGroupId": nil})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	after = detail(t, id)
	assert.Nil(t, after["callScenarioId"])
	assert.Nil(t, after["callAttemptGroupId"])

	// An empty body changes nothing but is fine.
	res = update(t, id, map[string]any{})
	assert.Equal(t, http.StatusOK, res.Status)
}

func TestUpdateRefusals(t *testing.T) {
	id := create(t, body(t, map[string]any{"code": "upd-refusals"}))
	create(t, body(t, map[string]any{"code": "upd-other"}))

	res := update(t, id, map[string]any{"title": nil, "sipEndpointIds": []int{}, "status": nil, "callSchedule": [][]string{{"x"}}})
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{
		"title":           "must not be null",
		"status":          "must not be null",
		"sipEndpointIds":  "must not be empty",
		"callSchedule[0]": `must be ["HH:MM","HH:MM"] or [] for a day off`,
	}, res.Errors())

	res = update(t, id, map[string]any{"code": "upd-other"})
	assert.Equal(t, http.StatusConflict, res.Status)
	assert.Contains(t, res.Errors(), "code")

	res = update(t, 987654321, map[string]any{"title": "x"})
	assert.Equal(t, http.StatusNotFound, res.Status)
	assert.False(t, res.Success)

	for _, bad := range []string{"abc", "0", "-1"} {
		res = env.Do(t, http.MethodPost, "/v2/order/update/"+bad, map[string]any{})
		assert.Equal(t, http.StatusBadRequest, res.Status, bad)
		assert.Contains(t, res.Errors(), "orderId")
	}

	// Refused updates leave the order as it was.
	assert.Equal(t, "upd-refusals", detail(t, id)["code"])
}

func TestConcurrentPartialUpdatesKeepEachOther(t *testing.T) {
	id := create(t, body(t, nil))
	var wg sync.WaitGroup
	wg.Go(func() {
		assert.Equal(t, http.StatusOK, update(t, id, map[string]any{"autoDialingEnabled": true}).Status)
	})
	wg.Go(func() { assert.Equal(t, http.StatusOK, update(t, id, map[string]any{"callScenarioId": 4}).Status) })
	wg.Go(func() { assert.Equal(t, http.StatusOK, update(t, id, map[string]any{"title": "Both"}).Status) })
	wg.Wait()
	v := detail(t, id)
	assert.Equal(t, true, v["autoDialingEnabled"])
	assert.Equal(t, 4.0, v["callScenarioId"])
	assert.Equal(t, "Both", v["title"])
}

func TestDetailRefusals(t *testing.T) {
	res := env.Do(t, http.MethodGet, "/v2/order/detail/987654321", nil)
	assert.Equal(t, http.StatusNotFound, res.Status)
	assert.Equal(t, "[]", string(res.Data))
	res = env.Do(t, http.MethodGet, "/v2/order/detail/x", nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, "orderId: must be an integer > 0", res.Message)
}

func TestRoutesNeedTheInternalToken(t *testing.T) {
	for _, r := range []struct{ method, path string }{
		{http.MethodPost, "/v2/order/create"},
		{http.MethodPost, "/v2/order/update/1"},
		{http.MethodGet, "/v2/order/detail/1"},
		{http.MethodGet, "/internal/orders/1"},
	} {
		res := env.Do(t, r.method, r.path, `{}`, "X-Internal-Token", "")
		assert.Equal(t, http.StatusUnauthorized, res.Status, r.path)
	}
}

func TestCreateIsIdempotent(t *testing.T) {
	b := body(t, nil)
	a := env.Do(t, http.MethodPost, "/v2/order/create", b, "Idempotency-Key", "order-key-1")
	again := env.Do(t, http.MethodPost, "/v2/order/create", b, "Idempotency-Key", "order-key-1")
	require.Equal(t, http.StatusOK, a.Status)
	require.Equal(t, http.StatusOK, again.Status)
	assert.Equal(t, a.ID(), again.ID())

	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM orders WHERE title = $1`, b["title"]))
	assert.Equal(t, 1, n)

	other := env.Do(t, http.MethodPost, "/v2/order/create", body(t, map[string]any{"title": "other"}), "Idempotency-Key", "order-key-1")
	assert.Equal(t, http.StatusConflict, other.Status)
}

func TestStoreUpdateRollsBackOnError(t *testing.T) {
	id := create(t, body(t, nil))
	store := order.NewStore(env.DB)
	_, err := store.Update(context.Background(), id, func(o *order.Order) error {
		o.Title = "never saved"
		return fmt.Errorf("refused")
	})
	require.Error(t, err)
	o, err := store.Get(context.Background(), id)
	require.NoError(t, err)
	assert.NotEqual(t, "never saved", o.Title)
}

// outboxEvents are the order.updated events recorded for order id.
func outboxEvents(t *testing.T, id int64) []event.Event {
	t.Helper()
	var bodies []string
	require.NoError(t, env.DB.Select(&bodies,
		`SELECT convert_from(body, 'UTF8') FROM outbox WHERE routing_key = 'order.updated' AND (convert_from(body, 'UTF8')::jsonb->>'orderId')::bigint = $1 ORDER BY id`, id))
	out := make([]event.Event, len(bodies))
	for i, b := range bodies {
		require.NoError(t, json.Unmarshal([]byte(b), &out[i]))
	}
	return out
}

func TestUpdateRecordsOneEventOnlyWhenItCommits(t *testing.T) {
	id := create(t, body(t, nil))
	assert.Empty(t, outboxEvents(t, id), "a create announces nothing")

	require.Equal(t, http.StatusOK, update(t, id, map[string]any{"title": "Announced"}).Status)
	evs := outboxEvents(t, id)
	require.Len(t, evs, 1)
	assert.Equal(t, "order.updated", evs[0].Type)
	assert.NotEmpty(t, evs[0].ID)
	assert.Equal(t, detail(t, id)["updatedAt"], evs[0].OccurredAt)
	var data map[string]any
	require.NoError(t, json.Unmarshal(evs[0].Data, &data))
	assert.Equal(t, "Announced", data["title"], "the order as the API returns it")
	assert.Equal(t, float64(id), data["id"])

	require.Equal(t, http.StatusBadRequest, update(t, id, map[string]any{"title": nil}).Status)
	_, err := order.NewStore(env.DB).Update(context.Background(), id, func(o *order.Order) error {
		return fmt.Errorf("refused")
	})
	require.Error(t, err)
	assert.Len(t, outboxEvents(t, id), 1, "refused and rolled-back updates announce nothing")

	require.Equal(t, http.StatusOK, update(t, id, map[string]any{"title": "Again"}).Status)
	evs = outboxEvents(t, id)
	require.Len(t, evs, 2)
	assert.NotEqual(t, evs[0].ID, evs[1].ID, "each update is an event of its own")
}

// A client's order is its own whatever it sends; another client gets exactly the answer for a
// missing order, and nothing changes. (Agents' orders depend on their agent groups, which the user
// service knows: e2e.)
func TestClientsOwnTheirOrders(t *testing.T) {
	as := func(user, group string) []string { return []string{"X-User-Id", user, "X-Access-Group", group} }
	res := env.Do(t, http.MethodPost, "/v2/order/create/", body(t, map[string]any{"clientUserId": 999}), as("501", "client")...)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	id := res.ID()
	assert.EqualValues(t, 501, detail(t, id)["clientUserId"], "set to the creating client")

	path := fmt.Sprintf("/v2/order/detail/%d/", id)
	mine := env.Do(t, http.MethodGet, path, nil, as("501", "client")...)
	assert.Equal(t, http.StatusOK, mine.Status, mine.Message)
	missing := env.Do(t, http.MethodGet, "/v2/order/detail/999999999/", nil, as("502", "client")...)
	other := env.Do(t, http.MethodGet, path, nil, as("502", "client")...)
	assert.Equal(t, missing.Status, other.Status)
	assert.Equal(t, fmt.Sprintf("order %d does not exist", id), other.Message)

	upd := env.Do(t, http.MethodPost, fmt.Sprintf("/v2/order/update/%d/", id), map[string]any{"title": "Taken over"}, as("502", "client")...)
	assert.Equal(t, http.StatusNotFound, upd.Status)
	assert.NotEqual(t, "Taken over", detail(t, id)["title"])

	// The owner may rename it but not give it away.
	upd = env.Do(t, http.MethodPost, fmt.Sprintf("/v2/order/update/%d/", id), map[string]any{"title": "Renamed", "clientUserId": 502}, as("501", "client")...)
	require.Equal(t, http.StatusOK, upd.Status, upd.Message)
	d := detail(t, id)
	assert.Equal(t, "Renamed", d["title"])
	assert.EqualValues(t, 501, d["clientUserId"])

	// Staff may clear the owner (an owner to set is checked with the user service: e2e).
	upd = update(t, id, map[string]any{"clientUserId": nil})
	require.Equal(t, http.StatusOK, upd.Status, upd.Message)
	assert.Nil(t, detail(t, id)["clientUserId"])
}

func TestVisibleOrdersForOtherServices(t *testing.T) {
	as := func(user string) []string { return []string{"X-User-Id", user, "X-Access-Group", "client"} }
	res := env.Do(t, http.MethodPost, "/v2/order/create/", body(t, nil), as("601")...)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	mine := res.ID()
	create(t, body(t, map[string]any{"title": "Someone else's"}))

	scope := func(query string) (bool, []int64) {
		res := env.Do(t, http.MethodGet, "/internal/order-scope?"+query, nil, "X-User-Id", "", "X-Access-Group", "")
		require.Equal(t, http.StatusOK, res.Status, res.Message)
		var s struct {
			All      bool    `json:"all"`
			OrderIDs []int64 `json:"orderIds"`
		}
		require.NoError(t, json.Unmarshal(res.Data, &s))
		return s.All, s.OrderIDs
	}
	all, ids := scope("userId=601&accessGroup=client")
	assert.False(t, all)
	assert.Equal(t, []int64{mine}, ids)
	all, ids = scope("userId=602&accessGroup=client")
	assert.False(t, all)
	assert.Empty(t, ids)
	all, _ = scope("userId=1&accessGroup=arbitration")
	assert.True(t, all)
	all, ids = scope("userId=3&accessGroup=")
	assert.False(t, all)
	assert.Empty(t, ids, "a user without a group sees no order")
	res = env.Do(t, http.MethodGet, "/internal/order-scope?userId=x", nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
}
