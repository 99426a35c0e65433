package dnc_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/services/lead/internal/dnc"
	"ccplatform/services/lead/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "lead_dnc", func(e *servicetest.Env) { env = e })
}

func TestTheListMarksLeadsAndAnswersChecks(t *testing.T) {
	env.Order(11, "dnc-11")
	res := env.Do(t, http.MethodPost, "/v2/lead/create", map[string]any{"leadType": "straight", "phone": "+7 916 555-01-01", "orderId": 11, "orderCode": "dnc-11"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	leadID := res.ID()
	detail := func() string {
		res := env.Do(t, http.MethodGet, fmt.Sprintf("/v2/lead/detail/%d", leadID), nil)
		require.Equal(t, http.StatusOK, res.Status, res.Message)
		return string(res.Data)
	}
	assert.Contains(t, detail(), `"doNotCall":false`)

	res = env.Do(t, http.MethodPost, "/v2/dnc/create", map[string]any{"phones": []string{"79165550101", "+7 (916) 555-01-02", "+79165550101"},
		"orderId": 11, "reason": "asked on the phone"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.JSONEq(t, `{"added":2,"updated":0}`, string(res.Data), "one entry per phone")
	assert.Contains(t, detail(), `"doNotCall":true`)
	res = env.Do(t, http.MethodGet, "/v2/lead?orderIds[]=11", nil)
	assert.Contains(t, string(res.Data), `"doNotCall":true`)

	check := func(q string) string {
		res := env.Do(t, http.MethodGet, "/v2/dnc/check?"+q, nil)
		require.Equal(t, http.StatusOK, res.Status, res.Message)
		return string(res.Data)
	}
	assert.JSONEq(t, `{"phone":"+79165550101","orderId":11,"doNotCall":true}`, check("phone=%2B79165550101&orderId=11"))
	assert.JSONEq(t, `{"phone":"+79165550101","orderId":null,"doNotCall":false}`, check("phone=79165550101"), "not on the every-order list")

	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	res = env.Do(t, http.MethodPost, "/v2/dnc/create", map[string]any{"phones": []string{"+79165550101"}, "orderId": nil, "expiresAt": expires.Format(time.RFC3339)})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.JSONEq(t, `{"added":1,"updated":0}`, string(res.Data))
	assert.Contains(t, check("phone=79165550101"), `"doNotCall":true`)

	res = env.Do(t, http.MethodGet, "/v2/dnc?phone=%2B79165550101", nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Contains(t, string(res.Data), `"total":2`)
	assert.Contains(t, string(res.Data), `"expiresAt":"`+expires.Format("2006-01-02T15:04:05")+`+00:00","active":true`)
	res = env.Do(t, http.MethodGet, "/v2/dnc?orderId=11&limit=1", nil)
	assert.Contains(t, string(res.Data), `"next":1,"total":2`)

	res = env.Do(t, http.MethodPost, "/v2/dnc/delete", map[string]any{"phones": []string{"+79165550101"}, "orderId": 11})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.JSONEq(t, `{"deleted":1}`, string(res.Data))
	assert.Contains(t, detail(), `"doNotCall":true`, "the every-order entry still holds")
	res = env.Do(t, http.MethodPost, "/v2/dnc/delete", map[string]any{"phones": []string{"+79165550101"}})
	assert.JSONEq(t, `{"deleted":1}`, string(res.Data))
	assert.Contains(t, detail(), `"doNotCall":false`)
}

func TestBadInputNamesTheField(t *testing.T) {
	res := env.Do(t, http.MethodPost, "/v2/dnc/create", map[string]any{"phones": []string{"+79165550101", "12"}, "orderId": 0,
		"expiresAt": "2020-01-01T00:00:00Z", "reason": 5})
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "reason")
	res = env.Do(t, http.MethodPost, "/v2/dnc/create", map[string]any{"phones": []string{"+79165550101", "12"}, "orderId": 0,
		"expiresAt": "2020-01-01T00:00:00Z"})
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{"phones[1]": "must be a phone number in E.164 format", "orderId": "must be an integer > 0 or null",
		"expiresAt": "must be in the future (null: for good)"}, res.Errors())
	res = env.Do(t, http.MethodPost, "/v2/dnc/create", map[string]any{"phones": []string{"+79165550101"}, "expiresAt": "9999-12-31T23:59:59-14:00"})
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{"expiresAt": apitime.RangeRule}, res.Errors())
	res = env.Do(t, http.MethodPost, "/v2/dnc/delete", map[string]any{"phones": []string{}})
	assert.Equal(t, map[string]string{"phones": "must hold 1 to 1000 phone numbers"}, res.Errors())
	res = env.Do(t, http.MethodGet, "/v2/dnc/check?orderId=x", nil)
	assert.Equal(t, map[string]string{"phone": "is required", "orderId": "must be an integer > 0"}, res.Errors())
	res = env.Do(t, http.MethodGet, "/v2/dnc?phone=abc&limit=0", nil)
	assert.Equal(t, map[string]string{"phone": "must be a phone number in E.164 format", "limit": "must be an integer from 1 to 100"}, res.Errors())
}

// A caller who may not see the every-order list (a client) checks its order's entries only: the
// check reveals no more than the list shows it.
func TestTheCheckOfAClientLeavesOutTheEveryOrderEntries(t *testing.T) {
	store := dnc.NewStore(env.DB)
	ctx := context.Background()
	order := int64(12)
	_, err := store.Add(ctx, dnc.Change{Phones: []string{"+79165550201"}}, nil)
	require.NoError(t, err)
	_, err = store.Add(ctx, dnc.Change{Phones: []string{"+79165550202"}, OrderID: &order}, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		phone      string
		everyOrder bool
		want       bool
	}{
		{"+79165550201", true, true},   // staff: the every-order entry stops calls in order 12
		{"+79165550201", false, false}, // a client: not on its order's list
		{"+79165550202", true, true},
		{"+79165550202", false, true},
	} {
		listed, err := store.Listed(ctx, tc.phone, &order, tc.everyOrder, time.Now())
		require.NoError(t, err)
		assert.Equal(t, tc.want, listed, "%s every-order %v", tc.phone, tc.everyOrder)
	}
	listed, err := store.Listed(ctx, "+79165550201", nil, true, time.Now())
	require.NoError(t, err)
	assert.True(t, listed, "staff check the every-order list without an order")
}
