package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leadOrder creates an order for lead tests and returns its id and code.
func leadOrder(t *testing.T, title string) (int64, string) {
	t.Helper()
	id := createOrder(t, minimalOrder(title))
	return id, orderDetail(t, id)["code"].(string)
}

// phoneSeq makes distinct valid Moscow mobile numbers, so tests never link to each other's leads.
var phoneSeq atomic.Int64

func newPhone() string {
	return fmt.Sprintf("7916%07d", 1000000+phoneSeq.Add(1)*7919%8000000)
}

func v2Lead(orderID int64, code, phone string) map[string]any {
	return map[string]any{"leadType": "straight", "phone": phone, "orderId": orderID, "orderCode": code}
}

func v1Lead(orderID int64, code, phone string) map[string]any {
	return map[string]any{"lead_type": "straight", "client_phone": phone, "order_id": orderID, "order_code": code,
		"messengerId": 5550001, "socialNetworkId": "123456", "socialLogin": "insta_user"}
}

func createLead(t *testing.T, path string, body any, opts ...Option) int64 {
	t.Helper()
	r := stack.Call(t, http.MethodPost, path, body, opts...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	id := int64(r.Data(t)["id"].(float64))
	require.Positive(t, id)
	return id
}

func leadDetail(t *testing.T, id int64) map[string]any {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(id, 10)+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Data(t)
}

// acceptJob sends an async create and returns its job id.
func acceptJob(t *testing.T, path string, body any, opts ...Option) string {
	t.Helper()
	r := stack.Call(t, http.MethodPost, path, body, opts...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.True(t, r.Env.Success)
	id, _ := r.Data(t)["jobId"].(string)
	require.Len(t, id, 36, "%s", r.Body)
	return id
}

// waitJob polls the job route until the job is no longer queued.
func waitJob(t *testing.T, jobID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := stack.Call(t, http.MethodGet, "/v2/lead/job/"+jobID+"/", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		d := r.Data(t)
		require.Equal(t, jobID, d["jobId"])
		if d["status"] != "queued" {
			return d
		}
		require.True(t, time.Now().Before(deadline), "job %s still queued after 20s", jobID)
		time.Sleep(50 * time.Millisecond)
	}
}

// internalGet asks lead-api directly, as other services do.
func internalGet(t *testing.T, path string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.URL("lead-api")+path, nil)
	require.NoError(t, err)
	req.Header.Set("X-Internal-Token", internalToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	env := struct {
		Data any `json:"data"`
	}{Data: out}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
}

// leadCustomFields is the lead custom-field catalog seeded by ccadmin, code → id.
func leadCustomFields(t *testing.T) map[string]int64 {
	t.Helper()
	var d struct {
		List []struct {
			ID   int64  `json:"id"`
			Code string `json:"code"`
		} `json:"list"`
	}
	internalGet(t, "/internal/custom-fields", &d)
	out := map[string]int64{}
	for _, f := range d.List {
		out[f.Code] = f.ID
	}
	return out
}

var rfc3339UTC = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$`)

func TestLeadCreateV2NormalisesAppliesDefaultsAndReadsBack(t *testing.T) {
	orderID, code := leadOrder(t, "Leads v2 create")
	fields := leadCustomFields(t)
	for _, c := range []string{"client_city", "client_age", "budget", "has_children", "preferred_call_date", "contact_channel", "interests"} {
		require.NotZero(t, fields[c], "demo lead custom field %s is seeded", c)
	}
	phone := newPhone()
	body := v2Lead(orderID, code, phone)
	body["name"] = "Иван"
	body["socialNetworkId"] = 987654
	body["messengerPhone"] = "+7 (916) 000-11-22"
	body["messengerUserName"] = "ivan"
	body["externalIdCrmB"] = "crm-b-1"
	body["adCampaignId"] = strings.Repeat("c", 64)
	body["source"] = "searchads.direct"
	body["priority"] = 5
	body["sourceComment"] = `{"q1":"yes"}`
	body["unknownField"] = "ignored"
	body["customValues"] = map[string]any{
		strconv.FormatInt(fields["client_city"], 10):         "Kazan",
		strconv.FormatInt(fields["client_age"], 10):          42,
		strconv.FormatInt(fields["budget"], 10):              1500.5,
		strconv.FormatInt(fields["has_children"], 10):        true,
		strconv.FormatInt(fields["preferred_call_date"], 10): "2027-03-01",
		strconv.FormatInt(fields["contact_channel"], 10):     "messenger",
		strconv.FormatInt(fields["interests"], 10):           "credit, deposit,credit",
	}
	id := createLead(t, "/v2/lead/create/", body)

	d := leadDetail(t, id)
	assert.Equal(t, float64(id), d["id"])
	assert.Equal(t, "+"+phone, d["phone"], "normalised to E.164 with +")
	assert.Equal(t, float64(3), d["utcOffset"], "inferred from a Moscow number")
	assert.Equal(t, float64(1), d["statusId"], "default status new")
	assert.Equal(t, "searchads.direct", d["source"])
	assert.Equal(t, "straight", d["leadType"])
	assert.Equal(t, "api_v2", d["createMethod"])
	assert.Equal(t, false, d["isSecondary"])
	assert.Equal(t, float64(5), d["priority"])
	assert.Equal(t, "987654", d["socialNetworkId"], "returned as a string")
	assert.Equal(t, "+79160001122", d["messengerPhone"])
	assert.Equal(t, "Иван", d["name"])
	assert.Equal(t, `{"q1":"yes"}`, d["sourceComment"])
	assert.Equal(t, "crm-b-1", d["externalIdCrmB"])
	assert.Nil(t, d["externalIdCrmA"])
	assert.Equal(t, float64(orderID), d["orderId"])
	assert.Equal(t, code, d["orderCode"])
	assert.Nil(t, d["planningCallDateTime"])
	assert.NotEmpty(t, d["ip"], "the gateway forwards the client address")
	assert.Regexp(t, rfc3339UTC, d["createdAt"])
	assert.Regexp(t, rfc3339UTC, d["updatedAt"])
	assert.NotContains(t, d, "previousLeadId", "the detail carries no links")
	assert.NotContains(t, d, "nextLeadId")
	assert.NotContains(t, d, "unknownField")
	cv := d["customValues"].(map[string]any)
	assert.Equal(t, "credit,deposit", cv[strconv.FormatInt(fields["interests"], 10)], "multiselect normalised")
	assert.Equal(t, float64(42), cv[strconv.FormatInt(fields["client_age"], 10)])
	assert.Len(t, cv, 7)

	// Unambiguous offsets only: a toll-free number spans many zones.
	id = createLead(t, "/v2/lead/create/", v2Lead(orderID, code, "+18002752273"))
	assert.Nil(t, leadDetail(t, id)["utcOffset"])
	// A sent offset wins over the inferred one; socialNetworkId as a string of digits.
	body = v2Lead(orderID, code, newPhone())
	body["utcOffset"] = -5
	body["socialNetworkId"] = "42"
	body["statusId"] = 2
	id = createLead(t, "/v2/lead/create/", body)
	d = leadDetail(t, id)
	assert.Equal(t, float64(-5), d["utcOffset"])
	assert.Equal(t, "42", d["socialNetworkId"])
	assert.Equal(t, float64(2), d["statusId"])
	assert.Equal(t, "organic", d["source"])
}

func TestLeadCreateV2RejectsEveryBrokenRule(t *testing.T) {
	orderID, code := leadOrder(t, "Leads v2 rules")
	fields := leadCustomFields(t)
	base := v2Lead(orderID, code, newPhone())
	// worker marks the rules that need the order service or the database: the async route accepts
	// those bodies and the job fails with the reason.
	cases := map[string]struct {
		body   map[string]any
		field  string
		worker bool
	}{
		"phone letters":          {with(base, "phone", "+7abc"), "phone", false},
		"phone too short":        {with(base, "phone", "+7916"), "phone", false},
		"phone missing":          {without(base, "phone"), "phone", false},
		"leadType":               {with(base, "leadType", "crooked"), "leadType", false},
		"leadType missing":       {without(base, "leadType"), "leadType", false},
		"orderId missing":        {without(base, "orderId"), "orderId", false},
		"orderId zero":           {with(base, "orderId", 0), "orderId", false},
		"orderId string":         {with(base, "orderId", "x"), "orderId", false},
		"orderCode missing":      {without(base, "orderCode"), "orderCode", false},
		"unknown order":          {with(base, "orderId", 987654321), "orderId", true},
		"code of another order":  {with(base, "orderCode", "no-such-code"), "orderCode", true},
		"final status on create": {with(base, "statusId", 4), "statusId", true},
		"unknown status":         {with(base, "statusId", 999), "statusId", true},
		"source":                 {with(base, "source", "tv.ads"), "source", false},
		"source kind":            {with(base, "source", "searchads.banner"), "source", false},
		"adCampaignId too long":  {with(base, "adCampaignId", strings.Repeat("x", 65)), "adCampaignId", false},
		"socialNetworkId text":   {with(base, "socialNetworkId", "abc"), "socialNetworkId", false},
		"socialNetworkId zero":   {with(base, "socialNetworkId", 0), "socialNetworkId", false},
		"utcOffset range":        {with(base, "utcOffset", 20), "utcOffset", false},
		"priority type":          {with(base, "priority", "high"), "priority", false},
		"custom field unknown":   {with(base, "customValues", map[string]any{"999999": "x"}), "customValues", true},
		"custom value type":      {with(base, "customValues", map[string]any{strconv.FormatInt(fields["client_age"], 10): "old"}), "customValues", true},
		"custom value option":    {with(base, "customValues", map[string]any{strconv.FormatInt(fields["contact_channel"], 10): "fax"}), "customValues", true},
		"custom key":             {with(base, "customValues", map[string]any{"abc": "x"}), "customValues", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assertFieldError(t, stack.Call(t, http.MethodPost, "/v2/lead/create/", tc.body), tc.field)
			if !tc.worker {
				assertFieldError(t, stack.Call(t, http.MethodPost, "/v2/lead/create-async/", tc.body), tc.field)
				return
			}
			job := waitJob(t, acceptJob(t, "/v2/lead/create-async/", tc.body))
			assert.Equal(t, "failed", job["status"])
			assert.Contains(t, job["reason"], tc.field)
		})
	}
	r := stack.Call(t, http.MethodPost, "/v2/lead/create/", `{"phone":`)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	r = stack.Call(t, http.MethodPost, "/v2/lead/create/", with(base, "phone", "+7abc", "leadType", "x"))
	assert.Contains(t, r.Errors(t), "phone", "every broken field is named")
	assert.Contains(t, r.Errors(t), "leadType")
	assert.Equal(t, "must be a phone number in E.164 format", r.Errors(t)["phone"])

	// None of the refused creates stored a lead.
	list := listLeads(t, "orderIds[]="+strconv.FormatInt(orderID, 10))
	assert.Equal(t, 0, list.Total)
}

// The order's code is read from the order service; a changed code is seen at once even though
// the order is cached.
func TestLeadOrderCodeFollowsOrderUpdates(t *testing.T) {
	orderID, code := leadOrder(t, "Leads code change")
	createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
	r := stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(orderID, 10)+"/", map[string]any{"code": code + "-new"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	createLead(t, "/v2/lead/create/", v2Lead(orderID, code+"-new", newPhone()))
	assertFieldError(t, stack.Call(t, http.MethodPost, "/v2/lead/create/", v2Lead(orderID, code, newPhone())), "orderCode")
}

type leadPage struct {
	List  []map[string]any `json:"list"`
	Next  int              `json:"next"`
	Total int              `json:"total"`
}

func listLeads(t *testing.T, query string) leadPage {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/lead/?"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var p leadPage
	require.NoError(t, json.Unmarshal(r.Env.Data, &p))
	return p
}

func leadIDs(list []map[string]any) []int64 {
	out := make([]int64, len(list))
	for i, l := range list {
		out[i] = int64(l["id"].(float64))
	}
	return out
}

func TestSecondaryLeadsAreLinkedInTheList(t *testing.T) {
	orderID, code := leadOrder(t, "Leads secondary")
	otherID, otherCode := leadOrder(t, "Leads secondary other")
	phone := newPhone()
	first := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, phone))
	second := createLead(t, "/v1/lead/create/", v1Lead(orderID, code, "+"+phone))
	third := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, "+7 "+phone[1:]))
	elsewhere := createLead(t, "/v2/lead/create/", v2Lead(otherID, otherCode, phone))

	byID := map[int64]map[string]any{}
	for _, l := range listLeads(t, "orderIds[]="+strconv.FormatInt(orderID, 10)+"&orderIds[]="+strconv.FormatInt(otherID, 10)).List {
		byID[int64(l["id"].(float64))] = l
	}
	require.Len(t, byID, 4)
	assert.Equal(t, false, byID[first]["isSecondary"])
	assert.Nil(t, byID[first]["previousLeadId"])
	assert.Equal(t, float64(second), byID[first]["nextLeadId"])
	assert.Equal(t, true, byID[second]["isSecondary"])
	assert.Equal(t, float64(first), byID[second]["previousLeadId"])
	assert.Equal(t, float64(third), byID[second]["nextLeadId"])
	assert.Equal(t, true, byID[third]["isSecondary"])
	assert.Equal(t, float64(second), byID[third]["previousLeadId"])
	assert.Nil(t, byID[third]["nextLeadId"])
	assert.Equal(t, false, byID[elsewhere]["isSecondary"], "another order's lead is not a repeat")
	assert.Nil(t, byID[elsewhere]["previousLeadId"])

	d := leadDetail(t, second)
	assert.Equal(t, true, d["isSecondary"])
	assert.NotContains(t, d, "previousLeadId")

	// Async repeats link the same way.
	job := waitJob(t, acceptJob(t, "/v2/lead/create-async/", v2Lead(orderID, code, phone)))
	require.Equal(t, "done", job["status"], "%v", job)
	fourth := int64(job["leadId"].(float64))
	for _, l := range listLeads(t, "orderIds[]="+strconv.FormatInt(orderID, 10)).List {
		switch int64(l["id"].(float64)) {
		case third:
			assert.Equal(t, float64(fourth), l["nextLeadId"])
		case fourth:
			assert.Equal(t, float64(third), l["previousLeadId"])
			assert.Equal(t, true, l["isSecondary"])
		}
	}
}

func TestSecondaryLinksUnderConcurrentCreates(t *testing.T) {
	orderID, code := leadOrder(t, "Leads concurrent repeats")
	phone := newPhone()
	const n = 12
	errs := make(chan error, n)
	for i := range n {
		go func() {
			path := "/v2/lead/create/"
			if i%2 == 1 {
				path = "/v2/lead/create-async/"
			}
			r := stack.Call(t, http.MethodPost, path, v2Lead(orderID, code, phone))
			if r.Status != http.StatusOK {
				errs <- fmt.Errorf("status %d: %s", r.Status, r.Body)
				return
			}
			errs <- nil
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	var list []map[string]any
	require.Eventually(t, func() bool {
		list = listLeads(t, "limit=100&orderIds[]="+strconv.FormatInt(orderID, 10)).List
		return len(list) == n
	}, 20*time.Second, 100*time.Millisecond)
	// One chain: exactly one head, every other lead points back to the one before it.
	heads, nexts := 0, map[float64]bool{}
	for _, l := range list {
		if l["isSecondary"] == false {
			heads++
			assert.Nil(t, l["previousLeadId"])
		} else {
			assert.NotNil(t, l["previousLeadId"])
		}
		if l["nextLeadId"] != nil {
			assert.False(t, nexts[l["nextLeadId"].(float64)], "two leads name the same next lead")
			nexts[l["nextLeadId"].(float64)] = true
		}
	}
	assert.Equal(t, 1, heads)
	assert.Len(t, nexts, n-1)
}

func TestLeadUpdateV2IsPartial(t *testing.T) {
	orderID, code := leadOrder(t, "Leads update")
	body := v2Lead(orderID, code, newPhone())
	body["name"] = "Before"
	body["externalIdCrmA"] = "ext-a"
	body["socialLogin"] = "login"
	body["adCampaignId"] = "camp"
	id := createLead(t, "/v2/lead/create/", body)
	path := "/v2/lead/update/" + strconv.FormatInt(id, 10) + "/"
	before := leadDetail(t, id)

	r := stack.Call(t, http.MethodPost, path, map[string]any{"name": "After", "statusId": 4, "socialNetworkId": 77, "priority": 9})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, `[]`, string(r.Env.Data))
	d := leadDetail(t, id)
	assert.Equal(t, "After", d["name"])
	assert.Equal(t, float64(4), d["statusId"], "any existing status on update")
	assert.Equal(t, "77", d["socialNetworkId"])
	assert.Equal(t, float64(9), d["priority"])
	assert.Equal(t, "ext-a", d["externalIdCrmA"], "unsent fields keep their values")
	assert.Equal(t, before["phone"], d["phone"])
	assert.Equal(t, before["createdAt"], d["createdAt"])

	// null clears nullable fields.
	r = stack.Call(t, http.MethodPost, path, map[string]any{"externalIdCrmA": nil, "adCampaignId": nil, "utcOffset": nil, "socialNetworkId": nil})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	d = leadDetail(t, id)
	assert.Nil(t, d["externalIdCrmA"])
	assert.Nil(t, d["adCampaignId"])
	assert.Nil(t, d["utcOffset"])
	assert.Nil(t, d["socialNetworkId"])
	assert.Equal(t, "login", d["socialLogin"])

	// A new phone is normalised and brings its offset.
	r = stack.Call(t, http.MethodPost, path, map[string]any{"phone": "14155552671"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	d = leadDetail(t, id)
	assert.Equal(t, "+14155552671", d["phone"])
	assert.NotNil(t, d["utcOffset"])
	r = stack.Call(t, http.MethodPost, path, map[string]any{"planningCallDateTime": 1798794000})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "2027-01-01T09:00:00+00:00", leadDetail(t, id)["planningCallDateTime"])

	for name, tc := range map[string]struct {
		body  map[string]any
		field string
	}{
		"null phone":      {map[string]any{"phone": nil}, "phone"},
		"bad phone":       {map[string]any{"phone": "123"}, "phone"},
		"null status":     {map[string]any{"statusId": nil}, "statusId"},
		"unknown status":  {map[string]any{"statusId": 999}, "statusId"},
		"null priority":   {map[string]any{"priority": nil}, "priority"},
		"null source":     {map[string]any{"source": nil}, "source"},
		"bad source":      {map[string]any{"source": "radio"}, "source"},
		"long campaign":   {map[string]any{"adCampaignId": strings.Repeat("x", 65)}, "adCampaignId"},
		"null custom map": {map[string]any{"customValues": nil}, "customValues"},
	} {
		t.Run(name, func(t *testing.T) {
			assertFieldError(t, stack.Call(t, http.MethodPost, path, tc.body), tc.field)
		})
	}

	r = stack.Call(t, http.MethodPost, "/v2/lead/update/987654321/", map[string]any{"name": "x"})
	assert.Equal(t, http.StatusNotFound, r.Status)
	assert.False(t, r.Env.Success)
	r = stack.Call(t, http.MethodPost, "/v2/lead/update/0/", map[string]any{"name": "x"})
	assert.Equal(t, http.StatusBadRequest, r.Status)
}

func TestLeadDetailPathIDs(t *testing.T) {
	r := stack.Call(t, http.MethodGet, "/v2/lead/detail/987654321/", nil)
	assert.Equal(t, http.StatusNotFound, r.Status)
	assert.JSONEq(t, `[]`, string(r.Env.Data))
	for _, p := range []string{"0", "-1", "abc"} {
		r = stack.Call(t, http.MethodGet, "/v2/lead/detail/"+p+"/", nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, p)
	}
}

func TestLeadV1CreateMapsOntoTheSameLeads(t *testing.T) {
	orderID, code := leadOrder(t, "Leads v1")
	phone := newPhone()
	body := v1Lead(orderID, code, phone)
	body["client_name"] = "Пётр"
	body["quiz_log"] = "answer 1; answer 2"
	body["campaign_id"] = "camp-v1"
	body["external_id"] = "ext-v1"
	body["priority"] = 3
	body["utc_offset"] = 5
	id := createLead(t, "/v1/lead/create/", body)
	d := leadDetail(t, id)
	assert.Equal(t, "+"+phone, d["phone"])
	assert.Equal(t, "Пётр", d["name"])
	assert.Equal(t, "answer 1; answer 2", d["sourceComment"])
	assert.Equal(t, "camp-v1", d["adCampaignId"])
	assert.Equal(t, "ext-v1", d["externalIdCrmA"])
	assert.Equal(t, float64(5), d["utcOffset"])
	assert.Equal(t, float64(3), d["priority"])
	assert.Equal(t, float64(5550001), d["messengerId"])
	assert.Equal(t, "123456", d["socialNetworkId"])
	assert.Equal(t, "insta_user", d["socialLogin"])
	assert.Equal(t, "api_v1", d["createMethod"])
	assert.Equal(t, "organic", d["source"])
	assert.Equal(t, float64(1), d["statusId"])

	base := v1Lead(orderID, code, newPhone())
	for name, tc := range map[string]struct {
		body  map[string]any
		field string
	}{
		"lead_type":             {without(base, "lead_type"), "lead_type"},
		"client_phone missing":  {without(base, "client_phone"), "client_phone"},
		"client_phone bad":      {with(base, "client_phone", "12"), "client_phone"},
		"order_id missing":      {without(base, "order_id"), "order_id"},
		"order_code missing":    {without(base, "order_code"), "order_code"},
		"messengerId missing":   {without(base, "messengerId"), "messengerId"},
		"messengerId bad":       {with(base, "messengerId", -1), "messengerId"},
		"socialNetworkId":       {without(base, "socialNetworkId"), "socialNetworkId"},
		"socialLogin":           {without(base, "socialLogin"), "socialLogin"},
		"utc_offset":            {with(base, "utc_offset", 99), "utc_offset"},
		"campaign_id too long":  {with(base, "campaign_id", strings.Repeat("x", 65)), "campaign_id"},
		"status final":          {with(base, "status", 5), "status"},
		"unknown order":         {with(base, "order_id", 987654321), "order_id"},
		"code of another order": {with(base, "order_code", "nope"), "order_code"},
	} {
		t.Run(name, func(t *testing.T) {
			r := stack.Call(t, http.MethodPost, "/v1/lead/create/", tc.body)
			assertFieldError(t, r, tc.field)
			for f := range r.Errors(t) {
				assert.NotContains(t, []string{"phone", "orderId", "orderCode", "leadType", "utcOffset", "statusId", "adCampaignId"}, f, "v1 errors use v1 names")
			}
		})
	}
}

func TestLeadV1UpdateMapsFields(t *testing.T) {
	orderID, code := leadOrder(t, "Leads v1 update")
	id := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
	path := "/v1/lead/update/" + strconv.FormatInt(id, 10) + "/"
	r := stack.Call(t, http.MethodPost, path, map[string]any{
		"client_name": "Anna", "quiz_log": "q", "campaign_id": "c1", "external_id": "e1", "status": 7,
		"call_timestamp": 1798794000, "utc_offset": 2, "socialNetworkId": "555", "messengerPhone": "+7 916 765-43-21",
	})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, `[]`, string(r.Env.Data))
	d := leadDetail(t, id)
	assert.Equal(t, "Anna", d["name"])
	assert.Equal(t, "q", d["sourceComment"])
	assert.Equal(t, "c1", d["adCampaignId"])
	assert.Equal(t, "e1", d["externalIdCrmA"])
	assert.Equal(t, float64(7), d["statusId"])
	assert.Equal(t, "2027-01-01T09:00:00+00:00", d["planningCallDateTime"])
	assert.Equal(t, float64(2), d["utcOffset"])
	assert.Equal(t, "555", d["socialNetworkId"])
	assert.Equal(t, "+79167654321", d["messengerPhone"], "normalised like client_phone")
	assertFieldError(t, stack.Call(t, http.MethodPost, path, map[string]any{"messengerPhone": "not a phone"}), "messengerPhone")

	r = stack.Call(t, http.MethodPost, path, map[string]any{"call_timestamp": "2027-02-03T10:00:00+03:00"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "2027-02-03T07:00:00+00:00", leadDetail(t, id)["planningCallDateTime"])

	assertFieldError(t, stack.Call(t, http.MethodPost, path, map[string]any{"client_phone": nil}), "client_phone")
	assertFieldError(t, stack.Call(t, http.MethodPost, path, map[string]any{"status": 999}), "status")
	assertFieldError(t, stack.Call(t, http.MethodPost, path, map[string]any{"call_timestamp": "soon"}), "call_timestamp")
	r = stack.Call(t, http.MethodPost, "/v1/lead/update/987654321/", map[string]any{"client_name": "x"})
	assert.Equal(t, http.StatusNotFound, r.Status)
}

func TestLeadAsyncCreateV2AndV1(t *testing.T) {
	orderID, code := leadOrder(t, "Leads async")
	phone := newPhone()
	body := v2Lead(orderID, code, phone)
	body["name"] = "Async"
	job := waitJob(t, acceptJob(t, "/v2/lead/create-async/", body))
	require.Equal(t, "done", job["status"], "%v", job)
	d := leadDetail(t, int64(job["leadId"].(float64)))
	assert.Equal(t, "Async", d["name"])
	assert.Equal(t, "+"+phone, d["phone"])
	assert.Equal(t, "api_v2_async", d["createMethod"])
	assert.Equal(t, float64(3), d["utcOffset"])
	assert.NotEmpty(t, d["ip"])

	v1 := v1Lead(orderID, code, newPhone())
	v1["client_name"] = "Async v1"
	job = waitJob(t, acceptJob(t, "/v1/lead/create-async/", v1))
	require.Equal(t, "done", job["status"], "%v", job)
	d = leadDetail(t, int64(job["leadId"].(float64)))
	assert.Equal(t, "Async v1", d["name"])
	assert.Equal(t, "api_v1_async", d["createMethod"])
	assert.Equal(t, float64(5550001), d["messengerId"])

	// What only the worker can check fails the job, with the reason in the version's names.
	job = waitJob(t, acceptJob(t, "/v2/lead/create-async/", with(v2Lead(orderID, code, newPhone()), "orderId", 987654321)))
	assert.Equal(t, "failed", job["status"])
	assert.Contains(t, job["reason"], "orderId")
	assert.NotContains(t, job, "leadId")
	job = waitJob(t, acceptJob(t, "/v1/lead/create-async/", with(v1Lead(orderID, code, newPhone()), "order_code", "nope")))
	assert.Equal(t, "failed", job["status"])
	assert.Contains(t, job["reason"], "order_code")
	job = waitJob(t, acceptJob(t, "/v2/lead/create-async/", with(v2Lead(orderID, code, newPhone()), "statusId", 6)))
	assert.Equal(t, "failed", job["status"])
	assert.Contains(t, job["reason"], "statusId")

	// Shape errors are answered at once, in v1 names for v1.
	assertFieldError(t, stack.Call(t, http.MethodPost, "/v2/lead/create-async/", without(body, "phone")), "phone")
	assertFieldError(t, stack.Call(t, http.MethodPost, "/v1/lead/create-async/", without(v1, "client_phone")), "client_phone")
	assertFieldError(t, stack.Call(t, http.MethodPost, "/v1/lead/create-async/", without(v1, "messengerId")), "messengerId")
}

func TestLeadJobRoute(t *testing.T) {
	r := stack.Call(t, http.MethodGet, "/v2/lead/job/not-a-uuid/", nil)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Errors(t), "jobId")
	// A well-formed UUID this service never issued.
	for _, id := range []string{"6f1c2a8e-1b2c-4d3e-8f40-123456789abc", "6f1c2a8e-1b2c-8d3e-8f40-123456789abc"} {
		r = stack.Call(t, http.MethodGet, "/v2/lead/job/"+id, nil)
		assert.Equal(t, http.StatusNotFound, r.Status, id)
		assert.False(t, r.Env.Success)
	}
}

func TestLeadJobIsQueuedUntilAWorkerTakesIt(t *testing.T) {
	orderID, code := leadOrder(t, "Leads queued")
	stack.Stop("lead-worker", syscall.SIGTERM)
	restarted := false
	defer func() {
		if !restarted {
			_ = stack.Start("lead-worker")
		}
	}()
	id := acceptJob(t, "/v2/lead/create-async/", v2Lead(orderID, code, newPhone()))
	r := stack.Call(t, http.MethodGet, "/v2/lead/job/"+id+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, `{"jobId":"`+id+`","status":"queued"}`, string(r.Env.Data))
	require.NoError(t, stack.Start("lead-worker"))
	restarted = true
	assert.Equal(t, "done", waitJob(t, id)["status"])
}

func TestLeadListFiltersAndPagination(t *testing.T) {
	orderID, code := leadOrder(t, "Leads list")
	otherID, otherCode := leadOrder(t, "Leads list other")
	start := time.Now().UTC().Add(-time.Second)
	var ids []int64
	for i := range 7 {
		body := v2Lead(orderID, code, newPhone())
		if i%3 == 0 {
			body["statusId"] = 2
		}
		ids = append(ids, createLead(t, "/v2/lead/create/", body))
	}
	createLead(t, "/v2/lead/create/", v2Lead(otherID, otherCode, newPhone()))
	oid := strconv.FormatInt(orderID, 10)

	all := listLeads(t, "orderIds[]="+oid)
	assert.Equal(t, 7, all.Total)
	assert.Equal(t, 7, all.Next)
	// Newest first.
	want := make([]int64, len(ids))
	for i, id := range ids {
		want[len(ids)-1-i] = id
	}
	assert.Equal(t, want, leadIDs(all.List))
	for _, l := range all.List {
		assert.Contains(t, l, "previousLeadId")
		assert.Contains(t, l, "nextLeadId")
		assert.Equal(t, float64(orderID), l["orderId"])
	}

	p1 := listLeads(t, "orderIds[]="+oid+"&limit=3")
	p2 := listLeads(t, "orderIds[]="+oid+"&limit=3&offset=3")
	p3 := listLeads(t, "orderIds[]="+oid+"&limit=3&offset=6")
	assert.Equal(t, want[:3], leadIDs(p1.List))
	assert.Equal(t, want[3:6], leadIDs(p2.List))
	assert.Equal(t, want[6:], leadIDs(p3.List))
	assert.Equal(t, []int{3, 6, 7}, []int{p1.Next, p2.Next, p3.Next})
	assert.Equal(t, 7, p3.Total)
	past := listLeads(t, "orderIds[]="+oid+"&offset=50")
	assert.Empty(t, past.List)
	assert.Equal(t, 50, past.Next)
	assert.Equal(t, 7, past.Total)

	st := listLeads(t, "orderIds[]="+oid+"&statusIds[]=2")
	assert.Equal(t, 3, st.Total)
	st = listLeads(t, "orderIds[]="+oid+"&statusIds[]=1&statusIds[]=2")
	assert.Equal(t, 7, st.Total)

	both := listLeads(t, "orderIds[]="+oid+"&orderIds[]="+strconv.FormatInt(otherID, 10))
	assert.Equal(t, 8, both.Total)

	from := url.QueryEscape(start.Format(time.RFC3339))
	to := url.QueryEscape(time.Now().UTC().Add(time.Minute).Format(time.RFC3339))
	in := listLeads(t, "orderIds[]="+oid+"&createdAt[0]="+from+"&createdAt[1]="+to)
	assert.Equal(t, 7, in.Total)
	later := url.QueryEscape(time.Now().UTC().Add(time.Hour).Format(time.RFC3339))
	assert.Equal(t, 0, listLeads(t, "orderIds[]="+oid+"&createdAt[0]="+later).Total)
	assert.Equal(t, 7, listLeads(t, "orderIds[]="+oid+"&createdAt[1]="+later).Total)
	assert.Equal(t, 0, listLeads(t, "orderIds[]="+oid+"&createdAt[1]="+url.QueryEscape(start.Add(-time.Hour).Format(time.RFC3339))).Total)
	today := time.Now().UTC().Format("2006-01-02")
	assert.Equal(t, 7, listLeads(t, "orderIds[]="+oid+"&createdAt[0]="+today+"&createdAt[1]="+today).Total, "a date as the upper bound is the whole day")

	noFilter := listLeads(t, "limit=1")
	assert.Len(t, noFilter.List, 1)
	assert.GreaterOrEqual(t, noFilter.Total, 8)

	for _, q := range []string{"limit=0", "limit=101", "offset=-1", "orderIds[]=x", "orderIds[]=0", "statusIds[]=-2", "createdAt[0]=yesterday",
		"createdAt[0]=2027-01-02&createdAt[1]=2027-01-01"} {
		r := stack.Call(t, http.MethodGet, "/v2/lead/?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, q)
	}
}

func TestLeadIdempotency(t *testing.T) {
	orderID, code := leadOrder(t, "Leads idempotency")
	body := v2Lead(orderID, code, newPhone())
	key := WithHeader("Idempotency-Key", "lead-sync-"+strconv.FormatInt(orderID, 10))
	id := createLead(t, "/v2/lead/create/", body, key)
	again := stack.Call(t, http.MethodPost, "/v2/lead/create/", body, key)
	require.Equal(t, http.StatusOK, again.Status)
	assert.Equal(t, float64(id), again.Data(t)["id"])
	other := stack.Call(t, http.MethodPost, "/v2/lead/create/", with(body, "name", "other"), key)
	assert.Equal(t, http.StatusConflict, other.Status)
	assert.Equal(t, 1, listLeads(t, "orderIds[]="+strconv.FormatInt(orderID, 10)).Total)

	v1 := v1Lead(orderID, code, newPhone())
	v1key := WithHeader("Idempotency-Key", "lead-v1-"+strconv.FormatInt(orderID, 10))
	id1 := createLead(t, "/v1/lead/create/", v1, v1key)
	assert.Equal(t, float64(id1), stack.Call(t, http.MethodPost, "/v1/lead/create/", v1, v1key).Data(t)["id"])

	akey := WithHeader("Idempotency-Key", "lead-async-"+strconv.FormatInt(orderID, 10))
	async := v2Lead(orderID, code, newPhone())
	jobID := acceptJob(t, "/v2/lead/create-async/", async, akey)
	assert.Equal(t, jobID, acceptJob(t, "/v2/lead/create-async/", async, akey))
	assert.Equal(t, "done", waitJob(t, jobID)["status"])
	v1async := v1Lead(orderID, code, newPhone())
	v1akey := WithHeader("Idempotency-Key", "lead-v1-async-"+strconv.FormatInt(orderID, 10))
	jobID = acceptJob(t, "/v1/lead/create-async/", v1async, v1akey)
	assert.Equal(t, jobID, acceptJob(t, "/v1/lead/create-async/", v1async, v1akey))
	assert.Equal(t, "done", waitJob(t, jobID)["status"])
	assert.Equal(t, 4, listLeads(t, "orderIds[]="+strconv.FormatInt(orderID, 10)).Total, "each key made one lead")
}

func TestLeadInternalRoutes(t *testing.T) {
	orderID, code := leadOrder(t, "Leads internal")
	id := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, "+79161112233"))
	var leads struct {
		List []struct {
			ID      int64  `json:"id"`
			Phone   string `json:"phone"`
			OrderID int64  `json:"orderId"`
		} `json:"list"`
	}
	internalGet(t, "/internal/leads?orderId="+strconv.FormatInt(orderID, 10)+"&limit=10", &leads)
	require.Len(t, leads.List, 1)
	assert.Equal(t, id, leads.List[0].ID)
	assert.Equal(t, "+79161112233", leads.List[0].Phone)
	assert.Equal(t, orderID, leads.List[0].OrderID)

	var statuses struct {
		List []struct {
			ID       int64  `json:"id"`
			Code     string `json:"code"`
			Category string `json:"category"`
		} `json:"list"`
	}
	internalGet(t, "/internal/lead-statuses", &statuses)
	require.NotEmpty(t, statuses.List)
	assert.Equal(t, "new", statuses.List[0].Code)
	assert.Equal(t, "in_progress", statuses.List[0].Category)
}

func TestLeadCreateNeedsTheOrderService(t *testing.T) {
	// An order never used for leads is not in lead-api's cache.
	orderID, code := leadOrder(t, "Leads order down")
	stack.Stop("order", syscall.SIGTERM)
	restarted := false
	defer func() {
		if !restarted {
			_ = stack.Start("order")
		}
	}()
	r := stack.Call(t, http.MethodPost, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
	assert.Equal(t, http.StatusServiceUnavailable, r.Status, "%s", r.Body)
	assert.False(t, r.Env.Success)
	// A body with a plain mistake is still the caller's to fix.
	r = stack.Call(t, http.MethodPost, "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "statusId", 5))
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.NoError(t, stack.Start("order"))
	restarted = true
	createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
}
