package call_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/telephony"
	"ccplatform/services/call/internal/call"
	"ccplatform/services/call/internal/ingest"
	"ccplatform/services/call/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "call_http", func(e *servicetest.Env) { env = e })
}

// save stores events the way call-ingest does and returns the new calls' ids in event order.
func save(t *testing.T, events ...telephony.CallEvent) []int64 {
	t.Helper()
	ctx := context.Background()
	store := ingest.NewStore(env.DB)
	statuses, err := store.Statuses(ctx)
	require.NoError(t, err)
	ids := make([]int64, len(events))
	for i, ev := range events {
		c, err := ingest.FromEvent(ev, time.Now())
		require.NoError(t, err)
		_, err = store.Save(ctx, []ingest.Resolved{{NewCall: c, StatusID: statuses[c.StatusCode]}})
		require.NoError(t, err)
		require.NoError(t, env.DB.GetContext(ctx, &ids[i], `SELECT id FROM calls WHERE platform_call_id = $1`, ev.PlatformCallID))
	}
	return ids
}

type page struct {
	List  []call.Call `json:"list"`
	Next  int         `json:"next"`
	Total int         `json:"total"`
}

func list(t *testing.T, query string) page {
	t.Helper()
	r := env.Get(t, "/v2/call?"+query)
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", query, r.Data)
	require.True(t, r.Success)
	var p page
	require.NoError(t, json.Unmarshal(r.Data, &p))
	return p
}

func idsOf(p page) []int64 {
	out := make([]int64, len(p.List))
	for i, c := range p.List {
		out[i] = c.ID
	}
	return out
}

var base = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func TestListFilters(t *testing.T) {
	lead1, lead2 := servicetest.LeadID(), servicetest.LeadID()
	e1 := servicetest.Event(lead1, base)
	e2 := servicetest.Event(lead1, base.Add(time.Hour))
	e2.UserID, e2.StatusCode, e2.AnsweredAt, e2.AgentConnectedAt, e2.HasRecords = 6, telephony.StatusNoAnswer, nil, nil, false
	e3 := servicetest.Event(lead2, base.Add(2*time.Hour))
	e3.OrderID = e1.OrderID
	e3.StatusCode = telephony.StatusBusy
	e4 := servicetest.Event(lead2, base.Add(24*time.Hour))
	e4.OrderID = e1.OrderID + 5000
	id := save(t, e1, e2, e3, e4)
	lq := func(lead int64) string { return "leadIds[]=" + strconv.FormatInt(lead, 10) }
	order := "orderIds[]=" + strconv.FormatInt(e1.OrderID, 10)

	cases := map[string]struct {
		query string
		want  []int64
	}{
		"one lead, newest first":   {lq(lead1), []int64{id[1], id[0]}},
		"two leads":                {lq(lead1) + "&" + lq(lead2), []int64{id[3], id[2], id[1], id[0]}},
		"order":                    {order + "&" + lq(lead1) + "&" + lq(lead2), []int64{id[2], id[1], id[0]}},
		"user":                     {lq(lead1) + "&userIds[]=6", []int64{id[1]}},
		"users":                    {lq(lead1) + "&userIds[]=6&userIds[]=5", []int64{id[1], id[0]}},
		"status":                   {lq(lead2) + "&statusIds[]=3", []int64{id[2]}},
		"statuses":                 {lq(lead1) + "&" + lq(lead2) + "&statusIds[]=1&statusIds[]=2", []int64{id[3], id[1], id[0]}},
		"period start":             {lq(lead1) + "&" + lq(lead2) + "&createdAt[0]=2026-11-21T11:00:00Z", []int64{id[3], id[2], id[1]}},
		"period end inclusive":     {lq(lead1) + "&" + lq(lead2) + "&createdAt[1]=2026-11-21T11:00:00%2B00:00", []int64{id[1], id[0]}},
		"period end in another tz": {lq(lead1) + "&createdAt[1]=2026-11-21T13:59:59%2B03:00", []int64{id[0]}},
		"period by days":           {lq(lead2) + "&createdAt[0]=2026-11-21&createdAt[1]=2026-11-21", []int64{id[2]}},
		"nothing matches":          {lq(lead1) + "&statusIds[]=9", []int64{}},
		"unknown lead":             {"leadIds[]=999999999999", []int64{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := list(t, tc.query)
			assert.Equal(t, tc.want, idsOf(p))
			assert.Equal(t, len(tc.want), p.Total)
			assert.Equal(t, len(tc.want), p.Next)
		})
	}
}

func TestListPagination(t *testing.T) {
	lead := servicetest.LeadID()
	var events []telephony.CallEvent
	for i := range 7 {
		// Pairs share their start time: the id breaks the tie, newest id first.
		events = append(events, servicetest.Event(lead, base.Add(time.Duration(i/2)*time.Minute)))
	}
	ids := save(t, events...)
	want := []int64{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}
	q := "leadIds[]=" + strconv.FormatInt(lead, 10)

	var got []int64
	for offset := 0; offset < 7; offset += 3 {
		p := list(t, fmt.Sprintf("%s&offset=%d&limit=3", q, offset))
		assert.Equal(t, 7, p.Total, "total counts every match, not the page")
		assert.Equal(t, offset+len(p.List), p.Next)
		got = append(got, idsOf(p)...)
	}
	assert.Equal(t, want, got, "pages neither overlap nor skip")

	p := list(t, q+"&offset=50")
	assert.Empty(t, p.List)
	assert.Equal(t, 7, p.Total)
	assert.Equal(t, 50, p.Next)
	r := env.Get(t, "/v2/call?"+q+"&offset=50")
	assert.Contains(t, string(r.Data), `"list":[]`, "an empty page is [] not null")
}

func TestListDefaultAndMaximumLimit(t *testing.T) {
	lead := servicetest.LeadID()
	var events []telephony.CallEvent
	for i := range 101 {
		events = append(events, servicetest.Event(lead, base.Add(time.Duration(i)*time.Second)))
	}
	save(t, events...)
	q := "leadIds[]=" + strconv.FormatInt(lead, 10)
	assert.Len(t, list(t, q).List, 50)
	p := list(t, q+"&limit=100")
	assert.Len(t, p.List, 100)
	assert.Equal(t, 101, p.Total)
}

func TestListRejectsBadQueries(t *testing.T) {
	r := env.Get(t, "/v2/call")
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.False(t, r.Success)
	assert.Contains(t, r.Message, "leadIds[]")
	assert.Contains(t, r.Message, "orderIds[]")
	assert.Contains(t, r.Errors(), "leadIds[]")
	assert.Contains(t, r.Errors(), "orderIds[]")

	for query, field := range map[string]string{
		"leadIds[]=abc":                 "leadIds[]",
		"orderIds[]=0":                  "orderIds[]",
		"orderIds[]=1&userIds[]=x":      "userIds[]",
		"orderIds[]=1&statusIds[]=-2":   "statusIds[]",
		"orderIds[]=1&limit=101":        "limit",
		"orderIds[]=1&offset=x":         "offset",
		"orderIds[]=1&createdAt[0]=now": "createdAt[0]",
	} {
		r := env.Get(t, "/v2/call?"+query)
		assert.Equal(t, http.StatusBadRequest, r.Status, query)
		assert.Contains(t, r.Errors(), field, query)
		assert.True(t, strings.HasPrefix(r.Message, field) || strings.Contains(r.Message, field+":"), r.Message)
	}
}

func TestDetail(t *testing.T) {
	ev := servicetest.Event(servicetest.LeadID(), base)
	ev.ClientPhone = "+447911123456"
	id := save(t, ev)[0]

	for _, path := range []string{"/v2/call/detail/%d", "/v2/call/detail/%d/"} {
		r := env.Get(t, fmt.Sprintf(path, id))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Data)
		assert.JSONEq(t, fmt.Sprintf(`{"id":%d,"sipEndpointId":3,"finishInitiator":"agent","direction":"outgoing",
			"leadId":%d,"userId":5,"orderId":%d,"statusId":1,"totalDurationSeconds":107,"waitTimeDurationSeconds":12,
			"talkTimeDurationSeconds":95,"isPredictive":false,"clientPhone":"447911123456","hasRecords":true,
			"createdAt":"2026-11-21T10:00:00+00:00"}`, id, ev.LeadID, ev.OrderID), string(r.Data))
	}

	r := env.Get(t, "/v2/call/detail/999999999")
	assert.Equal(t, http.StatusNotFound, r.Status)
	assert.False(t, r.Success)
	assert.JSONEq(t, `[]`, string(r.Data))

	for _, bad := range []string{"0", "-1", "abc", "1.5"} {
		r := env.Get(t, "/v2/call/detail/"+bad)
		assert.Equal(t, http.StatusBadRequest, r.Status, bad)
		assert.Contains(t, r.Errors(), "callId", bad)
	}
}

func TestRoutesNeedTheInternalToken(t *testing.T) {
	r := env.Get(t, "/v2/call?orderIds[]=1", "X-Internal-Token", "")
	assert.Equal(t, http.StatusUnauthorized, r.Status)
	r = env.Get(t, "/v2/call/detail/1", "X-Internal-Token", "wrong")
	assert.Equal(t, http.StatusUnauthorized, r.Status)
	r = env.Get(t, "/readyz", "X-Internal-Token", "")
	assert.Equal(t, http.StatusOK, r.Status, "the readiness probe needs no token")
	r = env.Get(t, "/v2/call/?orderIds[]=1")
	assert.Equal(t, http.StatusOK, r.Status, "the trailing slash is accepted")
}
