package call

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"ccplatform/pkg/apperr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestViewOf(t *testing.T) {
	client := "client"
	r := Record{ID: 1, SipEndpointID: 2, FinishInitiator: &client, Direction: "outgoing", LeadID: 3, UserID: 4,
		OrderID: 5, StatusID: 6, TotalDurationSeconds: 7, WaitTimeDurationSeconds: 2, TalkTimeDurationSeconds: 5,
		IsPredictive: true, ClientPhone: "79991234567", HasRecords: true,
		CreatedAt: time.Date(2026, 11, 21, 13, 0, 0, 500, time.FixedZone("MSK", 3*3600))}
	raw, err := json.Marshal(ViewOf(r))
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":1,"sipEndpointId":2,"finishInitiator":"client","direction":"outgoing","leadId":3,
		"userId":4,"orderId":5,"statusId":6,"totalDurationSeconds":7,"waitTimeDurationSeconds":2,
		"talkTimeDurationSeconds":5,"isPredictive":true,"clientPhone":"79991234567","hasRecords":true,
		"createdAt":"2026-11-21T10:00:00+00:00"}`, string(raw))

	r.FinishInitiator = nil
	r.ClientPhone = "+447911123456"
	v := ViewOf(r)
	assert.Nil(t, v.FinishInitiator)
	assert.Equal(t, "447911123456", v.ClientPhone, "never with +")
	raw, _ = json.Marshal(v)
	assert.Contains(t, string(raw), `"finishInitiator":null`)
}

func parse(t *testing.T, raw string) (Filter, apperr.FieldErrors) {
	t.Helper()
	q, err := url.ParseQuery(raw)
	require.NoError(t, err)
	f, err := ParseFilter(q)
	if err == nil {
		return f, nil
	}
	e, ok := apperr.As(err)
	require.True(t, ok)
	require.Equal(t, apperr.Invalid, e.Kind)
	return f, e.Fields
}

func TestParseFilter(t *testing.T) {
	f, fe := parse(t, "leadIds[]=3&leadIds[]=4&userIds[]=7&statusIds[]=1&statusIds[]=2&createdAt[0]=2026-11-01&createdAt[1]=2026-11-02T10:00:00%2B03:00&offset=10&limit=100")
	require.Nil(t, fe)
	assert.Equal(t, []int64{3, 4}, f.LeadIDs)
	assert.Empty(t, f.OrderIDs)
	assert.Equal(t, []int64{7}, f.UserIDs)
	assert.Equal(t, []int64{1, 2}, f.StatusIDs)
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), *f.Period.From)
	assert.Equal(t, time.Date(2026, 11, 2, 7, 0, 0, 1000, time.UTC), *f.Period.To, "an exact upper bound is inclusive")
	assert.Equal(t, 10, f.Page.Offset)
	assert.Equal(t, 100, f.Page.Limit)

	f, fe = parse(t, "orderIds[]=2")
	require.Nil(t, fe)
	assert.Equal(t, []int64{2}, f.OrderIDs)
	assert.Equal(t, 0, f.Page.Offset)
	assert.Equal(t, 50, f.Page.Limit, "default limit")
	assert.Nil(t, f.Period.From)
	assert.Nil(t, f.Period.To)

	f, fe = parse(t, "createdAt[1]=2026-11-02")
	require.NotNil(t, fe)
	assert.Equal(t, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC), *f.Period.To, "a date as the upper bound is the whole day")
}

func TestParseFilterErrors(t *testing.T) {
	cases := map[string]struct {
		query  string
		fields []string
	}{
		"neither leads nor orders": {"userIds[]=1", []string{"leadIds[]", "orderIds[]"}},
		"empty lead value":         {"leadIds[]=", []string{"leadIds[]", "orderIds[]"}},
		"zero lead":                {"leadIds[]=0", []string{"leadIds[]"}},
		"bad order":                {"orderIds[]=x", []string{"orderIds[]"}},
		"bad user":                 {"orderIds[]=1&userIds[]=-1", []string{"userIds[]"}},
		"bad status":               {"orderIds[]=1&statusIds[]=0", []string{"statusIds[]"}},
		"bad period start":         {"orderIds[]=1&createdAt[0]=yesterday", []string{"createdAt[0]"}},
		"bad period end":           {"orderIds[]=1&createdAt[1]=2026-13-01", []string{"createdAt[1]"}},
		"reversed period":          {"orderIds[]=1&createdAt[0]=2026-11-02&createdAt[1]=2026-11-01", []string{"createdAt[1]"}},
		"limit too big":            {"orderIds[]=1&limit=101", []string{"limit"}},
		"limit zero":               {"orderIds[]=1&limit=0", []string{"limit"}},
		"negative offset":          {"orderIds[]=1&offset=-1", []string{"offset"}},
		"several at once":          {"limit=0&statusIds[]=x", []string{"leadIds[]", "orderIds[]", "limit", "statusIds[]"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, fe := parse(t, tc.query)
			require.NotNil(t, fe)
			for _, f := range tc.fields {
				assert.Contains(t, fe, f)
			}
			assert.Len(t, fe, len(tc.fields), "%v", fe)
		})
	}
}
