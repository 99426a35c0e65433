package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The demo data of `user-admin seed` (services/user/internal/demo: users, agent groups) and
// `ccadmin seed --demo` (tools/internal/seed: catalogs, orders, leads, calls, loaded through the
// services' APIs), which the harness loaded before it started the gateway, as scripts/stack.sh
// does for `make run`: a newcomer's first requests must all answer with data.

// demoOrderCodes are the codes the seed gives its orders.
var demoOrderCodes = []string{"demo-credit-cards-msk", "demo-car-loans-spb"}

// demoOrderID finds a demo order by code with the order service's internal lookup (the public API
// has no order list).
func demoOrderID(t *testing.T, code string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.URL("order")+"/internal/orders?"+url.Values{"code": {code}}.Encode(), nil)
	require.NoError(t, err)
	req.Header.Set("X-Internal-Token", internalToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "demo order %s exists", code)
	var env struct {
		Data struct {
			ID   int64  `json:"id"`
			Code string `json:"code"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	require.Equal(t, code, env.Data.Code)
	return env.Data.ID
}

// demoPage is a list operation's data.
type demoPage struct {
	List  []map[string]any `json:"list"`
	Total int              `json:"total"`
}

func getPage(t *testing.T, path string) demoPage {
	t.Helper()
	r := stack.Call(t, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
	require.True(t, r.Env.Success)
	var p demoPage
	require.NoError(t, json.Unmarshal(r.Env.Data, &p))
	return p
}

func getData(t *testing.T, path string) map[string]any {
	t.Helper()
	r := stack.Call(t, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
	require.True(t, r.Env.Success)
	return r.Data(t)
}

// demoCalls waits (bounded) for call-ingest to have stored calls of an order.
func demoCalls(t *testing.T, orderID int64) demoPage {
	t.Helper()
	path := fmt.Sprintf("/v2/call/?orderIds[]=%d&limit=100", orderID)
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := getPage(t, path)
		if p.Total > 0 || time.Now().After(deadline) {
			return p
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestDemoDataAnswersEveryRead(t *testing.T) {
	for _, code := range demoOrderCodes {
		t.Run(code, func(t *testing.T) {
			id := demoOrderID(t, code)

			// getOrder: the order with everything a campaign has.
			o := getData(t, fmt.Sprintf("/v2/order/detail/%d/", id))
			assert.Equal(t, code, o["code"])
			assert.NotEmpty(t, o["title"])
			assert.NotEmpty(t, o["agentUserIds"])
			assert.NotEmpty(t, o["agentGroupIds"])
			// ccadmin names the agents by e-mail: they must be the user service's demo agents.
			for _, id := range o["agentUserIds"].([]any) {
				agent := getData(t, fmt.Sprintf("/v2/user/detail/%d/", int64(id.(float64))))
				assert.Equal(t, true, agent["isActive"], "agent %v", agent["email"])
				assert.Contains(t, []any{"call-center", "call-center-senior"}, agent["accessGroup"], "agent %v", agent["email"])
			}
			assert.NotEmpty(t, o["callHolidayOverrides"])
			assert.NotEmpty(t, o["transferNumbers"])
			assert.NotEmpty(t, o["sipEndpointIds"])
			assert.IsType(t, map[string]any{}, o["customValues"], "custom values are set")
			assert.NotEmpty(t, o["customValues"])
			assert.Len(t, o["callSchedule"], 7)
			// The seed makes the demo orders as the demo administrator.
			if assert.IsType(t, float64(0), o["createdBy"], "the order has an author") {
				author := getData(t, fmt.Sprintf("/v2/user/detail/%d/", int64(o["createdBy"].(float64))))
				assert.Equal(t, "admin", author["accessGroup"])
			}

			// listLeads: the order's leads, a secondary one linked to the lead it repeats.
			leads := getPage(t, fmt.Sprintf("/v2/lead/?orderIds[]=%d&limit=100", id))
			assert.GreaterOrEqual(t, leads.Total, 15)
			assert.LessOrEqual(t, leads.Total, 25)
			byID := map[float64]map[string]any{}
			for _, l := range leads.List {
				byID[l["id"].(float64)] = l
				assert.Equal(t, code, l["orderCode"])
				assert.True(t, strings.HasPrefix(l["phone"].(string), "+79"), "a Russian mobile: %v", l["phone"])
			}
			linked, adSystem := 0, 0
			for _, l := range leads.List {
				if strings.HasSuffix(l["source"].(string), ".ads") || strings.HasSuffix(l["source"].(string), ".direct") {
					adSystem++
				}
				if l["isSecondary"] != true {
					continue
				}
				prev, ok := byID[toFloat(l["previousLeadId"])]
				require.True(t, ok, "secondary lead %v points at a lead of the order", l["id"])
				assert.Equal(t, prev["phone"], l["phone"])
				assert.Equal(t, l["id"], prev["nextLeadId"], "the earlier lead points back")
				linked++
			}
			assert.Positive(t, linked, "a secondary lead is linked")
			assert.Positive(t, adSystem, "a lead from an ad system")
			statuses := map[any]bool{}
			for _, l := range leads.List {
				statuses[l["statusId"]] = true
			}
			assert.Greater(t, len(statuses), 3, "leads in several statuses")

			// listCalls and getCall: the calls of the order's leads, and one call's detail.
			calls := demoCalls(t, id)
			require.Positive(t, calls.Total, "call-ingest stored the demo calls")
			for _, c := range calls.List {
				_, ok := byID[c["leadId"].(float64)]
				assert.True(t, ok, "call %v is of a lead of the order", c["id"])
			}
			first := calls.List[0]
			detail := getData(t, fmt.Sprintf("/v2/call/detail/%d/", int64(first["id"].(float64))))
			assert.Equal(t, first, detail)
		})
	}

	t.Run("users", func(t *testing.T) {
		users := getPage(t, "/v2/user/list/")
		require.NotEmpty(t, users.List)
		u := getData(t, fmt.Sprintf("/v2/user/detail/%d/", int64(users.List[0]["id"].(float64))))
		assert.Equal(t, users.List[0]["email"], u["email"])
	})
	t.Run("agent groups", func(t *testing.T) {
		groups := getPage(t, "/v2/agent-group/")
		require.NotEmpty(t, groups.List)
		assert.NotEmpty(t, groups.List[0]["agentIds"])
	})
	t.Run("all leads", func(t *testing.T) {
		assert.NotEmpty(t, getPage(t, "/v2/lead/").List)
	})
}

// demoTotals are what a second seed must not change.
type demoTotals struct {
	Users       int
	AgentGroups int
	Orders      int
	Leads       map[string]int
	Calls       map[string]int
}

func countDemo(t *testing.T) demoTotals {
	t.Helper()
	conn, err := sql.Open("postgres", stack.DatabaseURL)
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tot := demoTotals{Leads: map[string]int{}, Calls: map[string]int{}}
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM users.users`).Scan(&tot.Users))
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM users.agent_groups`).Scan(&tot.AgentGroups))
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM orders.orders`).Scan(&tot.Orders))
	for _, code := range demoOrderCodes {
		id := demoOrderID(t, code)
		tot.Leads[code] = getPage(t, fmt.Sprintf("/v2/lead/?orderIds[]=%d&limit=1", id)).Total
		tot.Calls[code] = getPage(t, fmt.Sprintf("/v2/call/?orderIds[]=%d&limit=1", id)).Total
	}
	return tot
}

func TestDemoSeedTwiceCreatesNothing(t *testing.T) {
	for _, code := range demoOrderCodes {
		require.Positive(t, demoCalls(t, demoOrderID(t, code)).Total, "the first seed's calls are stored")
	}
	before := countDemo(t)
	out, err := stack.UserAdmin("seed")
	require.NoError(t, err)
	t.Log(out)
	assert.Equal(t, "seed users: 9 demo users upserted (admin: admin@demo.callcenter.local)\n"+
		"seed agent groups: 2 demo agent groups ensured", out)
	out, err = stack.CCAdmin("seed", "--demo")
	require.NoError(t, err)
	t.Log(out)
	for _, code := range demoOrderCodes {
		assert.Contains(t, out, code+" #", "the order is found again")
		assert.Contains(t, out, code+" has leads")
		assert.Contains(t, out, code+" has calls")
	}
	assert.NotContains(t, out, "created")
	assert.NotContains(t, out, "published")
	// Anything published by mistake would be stored within this time.
	time.Sleep(time.Second)
	assert.Equal(t, before, countDemo(t))
}

func toFloat(v any) float64 {
	f, _ := v.(float64)
	return f
}
