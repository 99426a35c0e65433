package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userIDs are the ids of the demo users, read with user-admin.
func userIDs(t *testing.T) []int64 {
	t.Helper()
	out, err := stack.UserAdmin("user", "list")
	require.NoError(t, err)
	var ids []int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if id, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	require.NotEmpty(t, ids, "no demo users in:\n%s", out)
	return ids
}

// orderCustomFields reads the order custom-field catalog (seeded by ccadmin) from the order
// service's internal route: the public API does not list custom fields.
func orderCustomFields(t *testing.T) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.URL("order")+"/internal/custom-fields", nil)
	require.NoError(t, err)
	req.Header.Set("X-Internal-Token", internalToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env struct {
		Data struct {
			List []struct {
				ID   int64  `json:"id"`
				Code string `json:"code"`
			} `json:"list"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	byCode := map[string]int64{}
	for _, f := range env.Data.List {
		byCode[f.Code] = f.ID
	}
	return byCode
}

func orderDetail(t *testing.T, id int64) map[string]any {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/order/detail/"+strconv.FormatInt(id, 10)+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.Data(t)
}

func TestOrderAgentsAreCheckedWithTheUserService(t *testing.T) {
	users := userIDs(t)
	body := minimalOrder("Agents check")
	body["agentUserIds"] = users[:1]
	id := createOrder(t, body)
	assert.Equal(t, []any{float64(users[0])}, orderDetail(t, id)["agentUserIds"])

	body = minimalOrder("Unknown agents")
	body["agentUserIds"] = []int64{users[0], 987654321}
	r := stack.Call(t, http.MethodPost, "/v2/order/create/", body)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.False(t, r.Env.Success)
	assert.Equal(t, "unknown user ids: 987654321", r.Errors(t)["agentUserIds"])

	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(id, 10)+"/", map[string]any{"agentUserIds": []int64{987654321}})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Errors(t), "agentUserIds")
	assert.Equal(t, []any{float64(users[0])}, orderDetail(t, id)["agentUserIds"], "a refused update changes nothing")
}

func TestOrderLifecycle(t *testing.T) {
	fields := orderCustomFields(t)
	regions, industry := fields["target_regions"], fields["industry"]
	require.NotZero(t, regions, "demo custom field target_regions is seeded")
	require.NotZero(t, industry, "demo custom field industry is seeded")

	r := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", map[string]any{"title": "E2E intervals", "intervals": []int{5, 60}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	groupID := r.Data(t)["id"].(float64)

	body := minimalOrder("Заказ E2E")
	body["callAttemptGroupId"] = groupID
	body["callHolidayOverrides"] = []string{"2027-01-07", "01.01.2027"}
	body["callSchedule"] = [][]string{{"09:00", "18:00"}}
	body["customValues"] = map[string]any{
		strconv.FormatInt(regions, 10):  "kazan, moscow",
		strconv.FormatInt(industry, 10): "finance",
	}
	body["transferNumbers"] = []any{map[string]any{"number": "+79990001122"}}
	id := createOrder(t, body, WithHeader("Idempotency-Key", "e2e-order-lifecycle"))

	// The same key and body replay the first answer instead of creating a second order.
	again := stack.Call(t, http.MethodPost, "/v2/order/create/", body, WithHeader("Idempotency-Key", "e2e-order-lifecycle"))
	require.Equal(t, http.StatusOK, again.Status, "%s", again.Body)
	assert.Equal(t, float64(id), again.Data(t)["id"])

	d := orderDetail(t, id)
	assert.Equal(t, "zakaz-e2e", d["code"])
	assert.Equal(t, groupID, d["callAttemptGroupId"])
	assert.Equal(t, []any{"01.01.2027", "07.01.2027"}, d["callHolidayOverrides"])
	assert.Len(t, d["callSchedule"], 7)
	assert.Equal(t, map[string]any{
		strconv.FormatInt(regions, 10):  "kazan,moscow",
		strconv.FormatInt(industry, 10): "finance",
	}, d["customValues"])
	assert.Equal(t, []any{map[string]any{"number": "+79990001122", "names": []any{}}}, d["transferNumbers"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`, d["createdAt"])
	assert.NotNil(t, d["createdBy"], "the verified caller is recorded")

	r = stack.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(id, 10)+"/", map[string]any{
		"title": "Renamed", "callAttemptGroupId": nil, "customValues": map[string]any{},
	})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, `[]`, string(r.Env.Data))
	d = orderDetail(t, id)
	assert.Equal(t, "Renamed", d["title"])
	assert.Equal(t, "zakaz-e2e", d["code"], "unsent fields keep their values")
	assert.Nil(t, d["callAttemptGroupId"])
	assert.Equal(t, []any{}, d["customValues"])

	r = stack.Call(t, http.MethodPost, "/v2/order/create/", map[string]any{"title": 5})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, "title: must be a string", r.Env.Message)

	r = stack.Call(t, http.MethodPost, "/v2/order/create/", minimalOrder("dup"))
	require.Equal(t, http.StatusOK, r.Status)
	dup := minimalOrder("dup again")
	dup["code"] = "zakaz-e2e"
	r = stack.Call(t, http.MethodPost, "/v2/order/create/", dup)
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Contains(t, r.Env.Message, "code")
}
