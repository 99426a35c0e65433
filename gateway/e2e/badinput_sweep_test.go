package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/db"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sweep a fuzzer ran against a running stack, kept as a test: every text field of every body
// with a NUL in it, every numeric filter at 2^31 and 2^63, query strings that cannot be parsed whole,
// dates that are not dates, wrong content types, and every path parameter and query value of every
// operation of the description with a NUL, a byte that is no UTF-8 or a broken character in it, or
// an odd value (huge, negative, "..", an encoded slash). Each must be refused (400 or 415, the
// envelope naming the field or parameter; any 4xx for the odd values) and leave every table of
// every schema as it was.

// sweepSchemas are the schemas whose row counts must not move. Outbox tables are left out: their
// relays delete rows of earlier tests' events at any moment.
var sweepSchemas = []string{"orders", "leads", "calls", "users", "notifications", "webhooks"}

// rowCounts is the row count of every table of the sweep's schemas, read straight from the
// database (the test checks an outcome; no service reads another's schema).
func rowCounts(t *testing.T) map[string]int64 {
	t.Helper()
	conn, err := db.Open(context.Background(), stack.DatabaseURL, "public", 2)
	require.NoError(t, err)
	defer conn.Close()
	var tables []string
	require.NoError(t, conn.Select(&tables, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)
		FROM information_schema.tables
		WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' AND table_name NOT LIKE '%outbox%'
		ORDER BY 1`, "{"+strings.Join(sweepSchemas, ",")+"}"))
	require.NotEmpty(t, tables)
	out := make(map[string]int64, len(tables))
	for _, tb := range tables {
		var n int64
		require.NoError(t, conn.Get(&n, "SELECT count(*) FROM "+tb))
		out[tb] = n
	}
	return out
}

// quietCounts waits until two snapshots a moment apart agree, so that work of earlier tests still
// landing (calls, notifications) is not taken for a write of the sweep.
func quietCounts(t *testing.T) map[string]int64 {
	t.Helper()
	prev := rowCounts(t)
	for deadline := time.Now().Add(20 * time.Second); ; {
		time.Sleep(700 * time.Millisecond)
		cur := rowCounts(t)
		if assert.ObjectsAreEqual(prev, cur) || time.Now().After(deadline) {
			return cur
		}
		prev = cur
	}
}

// textLeaves lists the paths of every string in a JSON-like value ("title", "names.ru",
// "transferNumbers.0.number"), sorted.
func textLeaves(v any, prefix string) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, prefix)
	case map[string]any:
		for k, e := range x {
			out = append(out, textLeaves(e, join(prefix, k))...)
		}
	case []any:
		for i, e := range x {
			out = append(out, textLeaves(e, join(prefix, strconv.Itoa(i)))...)
		}
	}
	sort.Strings(out)
	return out
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// withText is a deep copy of v with the string at path replaced by s.
func withText(v any, path []string, s string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == path[0] {
				if len(path) == 1 {
					out[k] = s
				} else {
					out[k] = withText(e, path[1:], s)
				}
				continue
			}
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(x))
		copy(out, x)
		i, _ := strconv.Atoi(path[0])
		if len(path) == 1 {
			out[i] = s
		} else {
			out[i] = withText(x[i], path[1:], s)
		}
		return out
	}
	return v
}

// refused asserts a 4xx envelope with success false; for a 400 naming a field, the field error
// (assertFieldError). Each request runs as its own subtest, so one failure does not hide the rest.
func refused(t *testing.T, r Response, status int, field string, what string) {
	t.Helper()
	t.Run(what, func(t *testing.T) {
		if status == http.StatusBadRequest && field != "" {
			assertFieldError(t, r, field)
			return
		}
		assert.Equal(t, status, r.Status, "%s", r.Body)
		assert.False(t, r.Env.Success)
		assert.NotEmpty(t, r.Env.Message)
	})
}

func TestBadInputSweepIsRefusedAndWritesNothing(t *testing.T) {
	user := userIDs(t)[0]
	orderID, code := leadOrder(t, "Sweep order")
	leadID := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
	r := stack.Call(t, http.MethodPost, "/v2/agent-group/create/", map[string]any{
		"names": map[string]any{"ru": "Группа", "gb": "Group"}, "agentIds": []int64{user}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	groupID := int64(r.Data(t)["id"].(float64))
	lead := strconv.FormatInt(leadID, 10)
	order := strconv.FormatInt(orderID, 10)
	group := strconv.FormatInt(groupID, 10)

	fullOrder := map[string]any{
		"serviceTitle": "Sweep service", "title": "Sweep", "status": "success", "sipEndpointIds": []any{1},
		"code": "sweep-code", "callSchedule": []any{[]any{"09:00", "18:00"}}, "callHolidayOverrides": []any{"2026-12-31"},
		"aiDefaultLanguage": "ru", "callRecordRule": "client_is_connected", "sipEndpointUsageScheme": "random_default",
		"agentLeadEditMode": "always",
		"transferNumbers":   []any{map[string]any{"number": "+79990001122", "names": map[string]any{"ru": "Отдел"}}},
	}
	v2 := map[string]any{
		"leadType": "straight", "phone": newPhone(), "orderId": orderID, "orderCode": code,
		"messengerUserName": "m_user", "messengerPhone": "+79161234567", "socialNetworkId": "123",
		"socialLogin": "login", "name": "Имя", "sourceComment": "comment", "externalIdCrmA": "a",
		"externalIdCrmB": "b", "externalIdCrmC": "c", "externalIdCrmD": "d", "source": "organic", "adCampaignId": "camp",
	}
	v1 := map[string]any{
		"lead_type": "straight", "client_phone": newPhone(), "order_id": orderID, "order_code": code,
		"messengerId": 5550001, "socialNetworkId": "123456", "socialLogin": "insta_user", "client_name": "Имя",
		"quiz_log": "quiz", "campaign_id": "camp", "external_id": "ext",
	}
	v2Update := map[string]any{
		"name": "Имя", "phone": newPhone(), "sourceComment": "c", "externalIdCrmA": "a", "externalIdCrmB": "b",
		"externalIdCrmC": "c", "externalIdCrmD": "d", "messengerUserName": "u", "messengerPhone": "+79161234567",
		"socialLogin": "l", "source": "organic", "adCampaignId": "camp",
	}
	v1Update := map[string]any{
		"client_name": "Имя", "client_phone": newPhone(), "quiz_log": "q", "campaign_id": "c", "external_id": "e",
		"messengerUserName": "u", "messengerPhone": "+79161234567", "socialNetworkId": "123", "socialLogin": "l",
	}
	note := map[string]any{"title": "Title", "text": "Text", "priority": "default", "level": "default"}
	private := map[string]any{"userId": user, "title": "Title", "text": "Text", "priority": "default", "level": "default"}
	groupNote := map[string]any{"group": "admin", "title": "Title", "text": "Text", "priority": "default", "level": "default"}
	agentGroup := map[string]any{"names": map[string]any{"ru": "Группа", "gb": "Group"}, "agentIds": []any{user}}
	callAttempt := map[string]any{"title": "Intervals", "intervals": []any{5, 60}}

	posts := []struct {
		path string
		body map[string]any
	}{
		{"/v2/order/create/", fullOrder},
		{"/v2/order/update/" + order + "/", fullOrder},
		{"/v2/lead/create/", v2},
		{"/v2/lead/create-async/", v2},
		{"/v2/lead/update/" + lead + "/", v2Update},
		{"/v1/lead/create/", v1},
		{"/v1/lead/create-async/", v1},
		{"/v1/lead/update/" + lead + "/", v1Update},
		{"/v2/agent-group/create/", agentGroup},
		{"/v2/agent-group/update/" + group + "/", agentGroup},
		{"/v2/call-attempt/create/", callAttempt},
		{"/v2/notification/private/", private},
		{"/v2/notification/public/", note},
		{"/v2/notification/group/", groupNote},
	}
	lists := map[string][]string{
		"/v2/lead/":         {"orderIds[]", "statusIds[]", "offset", "limit"},
		"/v2/call/":         {"leadIds[]", "orderIds[]", "userIds[]", "statusIds[]", "offset", "limit"},
		"/v2/user/list/":    {"offset", "limit"},
		"/v2/user/":         {"offset", "limit"},
		"/v2/agent-group/":  {"agentId", "offset", "limit"},
		"/v2/notification/": {"offset", "limit"},
	}
	// The call list needs one of its id filters; the others need none.
	base := map[string]string{"/v2/call/": "orderIds[]=" + order + "&"}

	// A subscription of the caller's, so that a redelivery reaches its event id. Its event never
	// happens during the sweep; it is deleted after the count (a refused request cannot have).
	r = stack.Call(t, http.MethodPost, "/v2/webhook/create/", map[string]any{
		"url": "http://127.0.0.1:9/sweep", "events": []string{"order.updated"}, "description": "sweep"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	hook := strconv.FormatInt(int64(r.Data(t)["id"].(float64)), 10)
	defer stack.Call(t, http.MethodPost, "/v2/webhook/delete/"+hook+"/", nil)

	before := quietCounts(t)
	sent := 0

	t.Run("NUL in every text field", func(t *testing.T) {
		for _, p := range posts {
			for _, field := range textLeaves(p.body, "") {
				body := withText(p.body, strings.Split(field, "."), "a\u0000b")
				r := stack.Call(t, http.MethodPost, p.path, body)
				sent++
				refused(t, r, http.StatusBadRequest, strings.Split(field, ".")[0], p.path+" "+field)
			}
		}
	})

	t.Run("numbers out of every column's range", func(t *testing.T) {
		// Each filter's column decides: status ids are integer (int4), other ids bigint; offset
		// and limit have their own bounds. A value the column can hold is a filter like any other.
		int4 := []string{"2147483648", "9223372036854775807", "9223372036854775808"}
		int8 := []string{"9223372036854775808", "-9223372036854775809", "99999999999999999999"}
		refusedValues := map[string][]string{
			"statusIds[]": int4, "orderIds[]": int8, "leadIds[]": int8, "userIds[]": int8, "agentId": int8,
			"offset": append([]string{"-1"}, int8...), "limit": {"0", "101", "2147483648", "9223372036854775808"},
		}
		for path, params := range lists {
			for _, param := range params {
				for _, v := range refusedValues[param] {
					r := stack.Call(t, http.MethodGet, path+"?"+base[path]+param+"="+v, nil)
					sent++
					refused(t, r, http.StatusBadRequest, strings.TrimSuffix(param, "[]"), path+" "+param+"="+v)
				}
			}
		}
		for _, field := range []string{"sipEndpointIds", "agentUserIds", "agentGroupIds"} {
			body := withValue(fullOrder, field, []any{json9223()})
			r := stack.Call(t, http.MethodPost, "/v2/order/create/", body)
			sent++
			refused(t, r, http.StatusBadRequest, field, "order "+field+" 2^63-1")
		}
		for _, field := range []string{"priority", "utcOffset", "statusId"} {
			for _, v := range []string{"2147483648", "9223372036854775808"} {
				raw := fmt.Sprintf(`{"leadType":"straight","phone":%q,"orderId":%d,"orderCode":%q,%q:%s}`,
					newPhone(), orderID, code, field, v)
				r := stack.Call(t, http.MethodPost, "/v2/lead/create/", raw)
				sent++
				refused(t, r, http.StatusBadRequest, field, "lead "+field+"="+v)
			}
		}
		for _, path := range []string{"/v2/order/detail/", "/v2/lead/detail/", "/v2/call/detail/", "/v2/user/detail/"} {
			r := stack.Call(t, http.MethodGet, path+"9223372036854775808/", nil)
			sent++
			assert.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, r.Status, "%s: %s", path, r.Body)
		}
	})

	t.Run("query strings that cannot be parsed whole", func(t *testing.T) {
		var pad strings.Builder
		for i := range 10_000 {
			fmt.Fprintf(&pad, "&x%d=1", i)
		}
		for path := range lists {
			r := stack.Call(t, http.MethodGet, path+"?"+base[path]+"limit=1"+pad.String(), nil)
			sent++
			refused(t, r, http.StatusBadRequest, "", path+" 10,000 parameters")
			r = stack.Call(t, http.MethodGet, path+"?"+base[path]+"limit=1;x=1", nil)
			sent++
			refused(t, r, http.StatusBadRequest, "", path+" semicolon")
		}
	})

	t.Run("dates that are not dates", func(t *testing.T) {
		for _, d := range []string{"1e10", "2026-01-01T25:61:61Z", "yesterday", "tomorrow", "now", "31.02.2026"} {
			for _, path := range []string{"/v2/order/create/", "/v2/order/update/" + order + "/"} {
				r := stack.Call(t, http.MethodPost, path, withValue(fullOrder, "callHolidayOverrides", []any{d}))
				sent++
				refused(t, r, http.StatusBadRequest, "callHolidayOverrides", path+" holiday "+d)
			}
		}
		for path := range lists {
			if path == "/v2/user/list/" || path == "/v2/user/" || path == "/v2/agent-group/" || path == "/v2/notification/" {
				continue
			}
			r := stack.Call(t, http.MethodGet, path+"?"+base[path]+"createdAt[0]=yesterday", nil)
			sent++
			refused(t, r, http.StatusBadRequest, "createdAt", path+" createdAt[0]=yesterday")
		}
	})

	t.Run("content types other than JSON", func(t *testing.T) {
		for _, p := range posts {
			for _, ct := range []string{"", "text/plain", "application/json; charset=latin1", "application/json-patch+json", "application/x-www-form-urlencoded"} {
				r := stack.Call(t, http.MethodPost, p.path, p.body, func(req *http.Request) {
					if ct == "" {
						req.Header.Del("Content-Type")
					} else {
						req.Header.Set("Content-Type", ct)
					}
				})
				sent++
				refused(t, r, http.StatusUnsupportedMediaType, "", p.path+" Content-Type "+ct)
			}
		}
	})

	ops := specOperations(t)
	// Values of the parameters not under test: real ones where a service would look the first
	// parameter up before reading the next (the subscription before its event id; the order a
	// bulk import fills rows with), else ids nothing has.
	pathFill := map[string]string{"webhookId": hook}
	queryFill := map[string]string{"orderId": order, "orderCode": code}
	// send is one request to op: a body that would be accepted as far as its content type goes
	// (the bulk import takes a CSV file), the path parameters filled, and query as given.
	send := func(t *testing.T, op specOperation, path, query string) Response {
		t.Helper()
		target := path
		if query != "" {
			target += "?" + query
		}
		sent++
		if op.method != http.MethodPost {
			return stack.Call(t, op.method, target, nil)
		}
		if op.path == "/v2/lead/import/" {
			return stack.Call(t, op.method, target, "phone,leadType\n"+newPhone()+",straight\n", WithHeader("Content-Type", "text/csv"))
		}
		return stack.Call(t, op.method, target, "{}")
	}
	notText := []string{"%00", "%ff", "%c3%28"}

	t.Run("text that is not text in every path parameter", func(t *testing.T) {
		for _, op := range ops {
			for _, name := range op.pathParams {
				for _, bad := range notText {
					r := send(t, op, op.fill(pathFill, name, bad), "")
					refused(t, r, http.StatusBadRequest, name, op.method+" "+op.path+" "+name+"="+bad)
				}
			}
		}
	})

	t.Run("text that is not text in every query value", func(t *testing.T) {
		for _, op := range ops {
			// An operation without query parameters is sent one it does not know: nothing may
			// pass a value on unchecked.
			names := op.queryParams
			if len(names) == 0 {
				names = []string{"q"}
			}
			for _, name := range names {
				for _, bad := range notText {
					query := ""
					for _, other := range op.queryParams {
						if v, ok := queryFill[other]; ok && other != name {
							query += other + "=" + v + "&"
						}
					}
					r := send(t, op, op.fill(pathFill, "", ""), query+name+"="+bad)
					refused(t, r, http.StatusBadRequest, name, op.method+" "+op.path+" ?"+name+"="+bad)
				}
			}
		}
	})

	t.Run("odd values in every path parameter", func(t *testing.T) {
		for _, op := range ops {
			for _, name := range op.pathParams {
				// An escaped slash is a character of its segment that no parameter may hold.
				for _, slash := range []string{"%2F", "a%2Fb", "%2f%2f"} {
					r := send(t, op, op.fill(pathFill, name, slash), "")
					refused(t, r, http.StatusBadRequest, name, op.method+" "+op.path+" "+name+"="+slash)
				}
				// The rest is clean text: each route's own rule refuses it, 400 or 404.
				for _, odd := range []string{"99999999999999999999", "-1", "0", "..", "%20"} {
					r := send(t, op, op.fill(pathFill, name, odd), "")
					t.Run(op.method+" "+op.path+" "+name+"="+odd, func(t *testing.T) {
						assert.True(t, r.Status >= 400 && r.Status < 500, "status %d: %s", r.Status, r.Body)
						assert.False(t, r.Env.Success)
						assert.NotEmpty(t, r.Env.Message)
					})
				}
			}
		}
	})

	// Async refusals must not surface later either: give any accepted job or notification time to
	// land before comparing.
	time.Sleep(time.Second)
	after := quietCounts(t)
	assert.Equal(t, before, after, "the sweep changed rows")
	t.Logf("sweep: %d requests, none accepted, no row written", sent)
}

// withValue is a shallow copy of m with key set to v.
func withValue(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = e
	}
	out[key] = v
	return out
}

// json9223 is 2^63-1 as a JSON number that encoding/json writes without losing digits.
func json9223() any { return jsonNumber("9223372036854775807") }

type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// specOperation is one operation of the public description (api/openapi.yaml): its method, its
// path as written there ({name} for a parameter) and the names of its parameters by place.
type specOperation struct {
	method, path            string
	pathParams, queryParams []string
}

// specOperations is every operation of the description, in path order.
func specOperations(t *testing.T) []specOperation {
	t.Helper()
	doc := openapiCheck.doc
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	var out []specOperation
	for _, p := range paths {
		item := doc.Paths.Value(p)
		methods := make([]string, 0, 2)
		for m := range item.Operations() {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			op := specOperation{method: m, path: p}
			for _, ref := range append(append(openapi3.Parameters{}, item.Parameters...), item.Operations()[m].Parameters...) {
				switch prm := ref.Value; prm.In {
				case openapi3.ParameterInPath:
					op.pathParams = append(op.pathParams, prm.Name)
				case openapi3.ParameterInQuery:
					op.queryParams = append(op.queryParams, prm.Name)
				}
			}
			out = append(out, op)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// fill is the operation's path with name set to value (raw: escapes go as they are) and every
// other parameter set from known, or to an id nothing has.
func (op specOperation) fill(known map[string]string, name, value string) string {
	path := op.path
	for _, p := range op.pathParams {
		v, ok := known[p]
		if !ok {
			v = "999999999"
		}
		if p == name {
			v = value
		}
		path = strings.Replace(path, "{"+p+"}", v, 1)
	}
	return path
}
