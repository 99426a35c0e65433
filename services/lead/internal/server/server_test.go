package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"testing"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/listquery"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/servicetest"
	"ccplatform/services/lead/internal/wiring"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "lead_server", func(e *servicetest.Env) { env = e })
}

var orderSeq int64 = 1000

// newOrder is an order id of the test's own, known to the order cache under code.
func newOrder(t *testing.T) (int64, string) {
	t.Helper()
	orderSeq++
	code := "order-" + strconv.FormatInt(orderSeq, 10)
	env.Order(orderSeq, code)
	return orderSeq, code
}

func body(orderID int64, code, phone string) map[string]any {
	return map[string]any{"leadType": "straight", "phone": phone, "orderId": orderID, "orderCode": code}
}

func create(t *testing.T, b any) int64 {
	t.Helper()
	res := env.Do(t, http.MethodPost, "/v2/lead/create", b, "X-Forwarded-For", "203.0.113.9, 10.0.0.1")
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	return res.ID()
}

func TestHealthNeedsNoToken(t *testing.T) {
	res := env.Do(t, http.MethodGet, "/readyz", nil, "X-Internal-Token", "")
	assert.Equal(t, http.StatusOK, res.Status)
	assert.Contains(t, string(res.Data), `"database":"ok"`)
	assert.Contains(t, string(res.Data), `"broker":"ok"`)
	res = env.Do(t, http.MethodGet, "/v2/lead/detail/1", nil, "X-Internal-Token", "")
	assert.Equal(t, http.StatusUnauthorized, res.Status)
}

func TestCatalogRoutes(t *testing.T) {
	res := env.Do(t, http.MethodPost, "/internal/custom-fields", map[string]any{"code": "lead_color", "name": "Color", "type": "select", "options": []string{"red", "green"}})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	id := res.ID()
	res = env.Do(t, http.MethodPost, "/internal/custom-fields/", map[string]any{"code": "lead_color", "name": "Colour", "type": "select", "options": []string{"red"}})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Equal(t, id, res.ID(), "upsert by code keeps the id")
	res = env.Do(t, http.MethodPost, "/internal/custom-fields", map[string]any{"code": "x", "name": "X", "type": "color"})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	res = env.Do(t, http.MethodGet, "/internal/custom-fields", nil)
	assert.Contains(t, string(res.Data), `"name":"Colour"`)

	res = env.Do(t, http.MethodGet, "/internal/lead-statuses", nil)
	require.Equal(t, http.StatusOK, res.Status)
	var st struct {
		List []struct {
			ID       int64  `json:"id"`
			Code     string `json:"code"`
			Category string `json:"category"`
		} `json:"list"`
	}
	require.NoError(t, json.Unmarshal(res.Data, &st))
	byCode := map[string]string{}
	for _, s := range st.List {
		byCode[s.Code] = s.Category
	}
	assert.Equal(t, "in_progress", byCode["new"])
	assert.Equal(t, "success", byCode["qualified"])
	assert.Equal(t, "failure", byCode["wrong_number"])
}

func TestCreateDetailAndCustomValues(t *testing.T) {
	orderID, code := newOrder(t)
	res := env.Do(t, http.MethodPost, "/internal/custom-fields", map[string]any{"code": "lead_age", "name": "Age", "type": "integer"})
	require.Equal(t, http.StatusOK, res.Status)
	field := strconv.FormatInt(res.ID(), 10)
	b := body(orderID, code, "79161230001")
	b["customValues"] = map[string]any{field: 30}
	id := create(t, b)
	res = env.Do(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(id, 10)+"/", nil)
	require.Equal(t, http.StatusOK, res.Status)
	var d map[string]any
	require.NoError(t, json.Unmarshal(res.Data, &d))
	assert.Equal(t, "+79161230001", d["phone"])
	assert.Equal(t, "203.0.113.9", d["ip"], "the first X-Forwarded-For address")
	assert.Equal(t, map[string]any{field: float64(30)}, d["customValues"])
	assert.Equal(t, float64(1), d["statusId"])

	b["customValues"] = map[string]any{field: "thirty"}
	res = env.Do(t, http.MethodPost, "/v2/lead/create", b)
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, "must be an integer", res.Errors()["customValues."+field])

	// An order the cache does not know must be asked of the order service, which is down here.
	res = env.Do(t, http.MethodPost, "/v2/lead/create", body(987654, "x", "79161230002"))
	assert.Equal(t, http.StatusServiceUnavailable, res.Status)
	assert.Contains(t, res.Message, "order service")
}

func TestUpdate(t *testing.T) {
	orderID, code := newOrder(t)
	b := body(orderID, code, "79161230010")
	b["name"] = "A"
	id := create(t, b)
	path := "/v2/lead/update/" + strconv.FormatInt(id, 10)
	res := env.Do(t, http.MethodPost, path, map[string]any{"name": nil, "statusId": 5, "phone": "+1 212 555 1234"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Equal(t, "[]", string(res.Data))
	l, err := env.Leads.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Nil(t, l.Name)
	assert.Equal(t, int64(5), l.StatusID)
	assert.Equal(t, "+12125551234", l.Phone)
	assert.True(t, l.UpdatedAt.After(l.CreatedAt) || l.UpdatedAt.Equal(l.CreatedAt))
	var by *int64
	require.NoError(t, env.DB.Get(&by, `SELECT updated_by FROM leads WHERE id = $1`, id))
	require.NotNil(t, by, "the update records who made it")
	assert.Equal(t, servicetest.UserID, strconv.FormatInt(*by, 10))

	res = env.Do(t, http.MethodPost, path, map[string]any{"statusId": 99})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	res = env.Do(t, http.MethodPost, "/v2/lead/update/99999999", map[string]any{"name": "x"})
	assert.Equal(t, http.StatusNotFound, res.Status)
	res = env.Do(t, http.MethodPost, "/v1/lead/update/99999999", map[string]any{"client_name": "x"})
	assert.Equal(t, http.StatusNotFound, res.Status)
	res = env.Do(t, http.MethodPost, "/v1/lead/update/"+strconv.FormatInt(id, 10), map[string]any{"status": 99})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "status")
}

func TestConcurrentCreatesOfOnePhoneMakeOneChain(t *testing.T) {
	orderID, code := newOrder(t)
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := env.Do(t, http.MethodPost, "/v2/lead/create", body(orderID, code, "+79161230020"))
			assert.Equal(t, http.StatusOK, res.Status, res.Message)
		}()
	}
	wg.Wait()
	leads, total, err := env.Leads.List(context.Background(), lead.Filter{OrderIDs: []int64{orderID}}, listquery.Page{Limit: 100})
	require.NoError(t, err)
	require.Equal(t, n, total)
	// The chain follows the ids (drawn under the phone's lock); created_at is each transaction's
	// start, which concurrent creates do not order.
	sort.Slice(leads, func(i, j int) bool { return leads[i].ID > leads[j].ID })
	for i, l := range leads {
		if i == len(leads)-1 {
			assert.False(t, l.IsSecondary)
			assert.Nil(t, l.PreviousLeadID)
			continue
		}
		assert.True(t, l.IsSecondary)
		require.NotNil(t, l.PreviousLeadID)
		assert.Equal(t, leads[i+1].ID, *l.PreviousLeadID)
		require.NotNil(t, leads[i+1].NextLeadID)
		assert.Equal(t, l.ID, *leads[i+1].NextLeadID)
	}
	assert.Nil(t, leads[0].NextLeadID)
}

// TestPreparedCreateChainsWithAGenericPlan runs the sync create's prepared statement the way
// PostgreSQL runs it once a connection has executed it a few times (a generic plan, cached): the
// chain must stay exact, since the function claims the id with snapshots of its own whatever the
// calling statement's plan.
func TestPreparedCreateChainsWithAGenericPlan(t *testing.T) {
	s := env.Settings
	u, err := url.Parse(env.DBURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("plan_cache_mode", "force_generic_plan")
	u.RawQuery = q.Encode()
	s.Database.URL = u.String()
	conn, err := wiring.OpenDB(context.Background(), s)
	require.NoError(t, err)
	defer conn.Close()
	var mode string
	require.NoError(t, conn.Get(&mode, `SHOW plan_cache_mode`))
	require.Equal(t, "force_generic_plan", mode)

	store := lead.NewStore(conn)
	orderID, code := newOrder(t)
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := store.Create(context.Background(), lead.Lead{OrderID: orderID, OrderCode: code,
				Phone: "+79161230021", StatusID: 1, LeadType: lead.TypeStraight, CreateMethod: lead.MethodAPIv2,
				Source: lead.SourceOrganic, CustomValues: lead.CustomValues{}})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	leads, total, err := store.List(context.Background(), lead.Filter{OrderIDs: []int64{orderID}}, listquery.Page{Limit: 100})
	require.NoError(t, err)
	require.Equal(t, n, total)
	sort.Slice(leads, func(i, j int) bool { return leads[i].ID > leads[j].ID })
	for i, l := range leads[:n-1] {
		require.NotNil(t, l.PreviousLeadID, "lead %d", l.ID)
		assert.Equal(t, leads[i+1].ID, *l.PreviousLeadID)
		require.NotNil(t, leads[i+1].NextLeadID)
		assert.Equal(t, l.ID, *leads[i+1].NextLeadID)
	}
	assert.Nil(t, leads[n-1].PreviousLeadID)
	assert.False(t, leads[n-1].IsSecondary)
	assert.Nil(t, leads[0].NextLeadID)
}

func TestListFiltersPagesAndCounts(t *testing.T) {
	orderID, code := newOrder(t)
	for i := range 5 {
		b := body(orderID, code, fmt.Sprintf("+7916123%04d", 100+i))
		if i < 2 {
			b["statusId"] = 3
		}
		create(t, b)
	}
	// Move two leads back in time, to filter by period.
	_, err := env.DB.Exec(`UPDATE leads SET created_at = '2026-01-15T10:00:00Z' WHERE order_id = $1 AND status_id = 3`, orderID)
	require.NoError(t, err)
	oid := strconv.FormatInt(orderID, 10)
	list := func(q string) (ids []int64, next, total int) {
		res := env.Do(t, http.MethodGet, "/v2/lead?orderIds[]="+oid+"&"+q, nil)
		require.Equal(t, http.StatusOK, res.Status, res.Message)
		var p struct {
			List  []map[string]any `json:"list"`
			Next  int              `json:"next"`
			Total int              `json:"total"`
		}
		require.NoError(t, json.Unmarshal(res.Data, &p))
		for _, l := range p.List {
			ids = append(ids, int64(l["id"].(float64)))
			assert.Contains(t, l, "previousLeadId")
		}
		return ids, p.Next, p.Total
	}
	all, next, total := list("")
	assert.Equal(t, 5, total)
	assert.Equal(t, 5, next)
	assert.IsDecreasing(t, all[:3], "newest first")
	ids, next, total := list("limit=2&offset=1")
	assert.Equal(t, all[1:3], ids)
	assert.Equal(t, 3, next)
	assert.Equal(t, 5, total)
	_, _, total = list("statusIds[]=3")
	assert.Equal(t, 2, total)
	_, _, total = list("createdAt[0]=2026-01-01&createdAt[1]=2026-01-31")
	assert.Equal(t, 2, total)
	_, _, total = list("createdAt[1]=2026-01-15T10:00:00Z")
	assert.Equal(t, 2, total, "an exact upper bound is inclusive")
	_, _, total = list("createdAt[0]=2026-02-01")
	assert.Equal(t, 3, total)
	res := env.Do(t, http.MethodGet, "/v2/lead?limit=101", nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "limit")
}

func TestListUsesTheOrderIndex(t *testing.T) {
	// 40,000 leads over 400 orders and a year, so that the planner has a real choice.
	_, err := env.DB.Exec(`
INSERT INTO leads (order_id, order_code, phone, status_id, lead_type, create_method, created_at)
SELECT 900000 + g % 400, 'bulk', '+7916' || lpad(g::text, 7, '0'), 1, 'straight', 'api_v2',
       '2026-01-01'::timestamptz + (g % 365) * interval '1 day'
FROM generate_series(1, 40000) AS g`)
	require.NoError(t, err)
	_, err = env.DB.Exec(`ANALYZE leads`)
	require.NoError(t, err)
	explain := func(q string, args ...any) string {
		rows, err := env.DB.Query(`EXPLAIN `+q, args...)
		require.NoError(t, err)
		defer rows.Close()
		var plan string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan += line + "\n"
		}
		require.NoError(t, rows.Err())
		return plan
	}
	const where = `WHERE order_id = $1 AND created_at >= '2026-03-01' AND created_at < '2026-04-01'`
	page := explain(`SELECT id FROM leads `+where+` ORDER BY created_at DESC, id DESC LIMIT 50`, 900007)
	assert.Contains(t, page, "leads_order_created")
	count := explain(`SELECT count(*) FROM leads `+where, 900007)
	assert.Contains(t, count, "leads_order_created")
	leads, total, err := env.Leads.List(context.Background(), lead.Filter{OrderIDs: []int64{900007}}, listquery.Page{Limit: 50})
	require.NoError(t, err)
	assert.Equal(t, 100, total)
	assert.Len(t, leads, 50)
}

func TestAsyncAcceptPublishesTheJob(t *testing.T) {
	orderID, code := newOrder(t)
	b := body(orderID, code, "79161230030")
	res := env.Do(t, http.MethodPost, "/v2/lead/create-async/", b, "Idempotency-Key", "async-1", "X-Request-Id", "req-async-1")
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var acc asynccreate.Accepted
	require.NoError(t, json.Unmarshal(res.Data, &acc))
	again := env.Do(t, http.MethodPost, "/v2/lead/create-async/", b, "Idempotency-Key", "async-1")
	assert.JSONEq(t, string(res.Data), string(again.Data), "the same key replays the job id")
	other := env.Do(t, http.MethodPost, "/v2/lead/create-async/", map[string]any{"phone": "+79161230031", "leadType": "straight", "orderId": orderID, "orderCode": code}, "Idempotency-Key", "async-1")
	assert.Equal(t, http.StatusConflict, other.Status)

	// The job waits in lead.jobs in a persistent message of its own, named after it.
	ch, err := env.Broker.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	var found bool
	for range 50 {
		d, ok, err := ch.Get(asynccreate.Queue, false)
		require.NoError(t, err)
		if !ok {
			break
		}
		_ = d.Ack(false)
		if d.MessageId != acc.JobID {
			continue
		}
		found = true
		assert.Equal(t, uint8(2), d.DeliveryMode)
		assert.Equal(t, asynccreate.MessageType, d.Type)
		var m asynccreate.Message
		require.NoError(t, json.Unmarshal(d.Body, &m))
		assert.Equal(t, "v2", m.Version)
		assert.Equal(t, "api_v2_async", m.CreateMethod)
		require.NotNil(t, m.CallerUserID)
		assert.Equal(t, int64(7), *m.CallerUserID)
		assert.JSONEq(t, mustJSON(t, b), string(m.Body))
		assert.Equal(t, "req-async-1", m.RequestID, "the job names the request that queued it")
	}
	assert.True(t, found)

	res = env.Do(t, http.MethodGet, "/v2/lead/job/"+acc.JobID, nil)
	require.Equal(t, http.StatusOK, res.Status)
	assert.JSONEq(t, `{"jobId":"`+acc.JobID+`","status":"queued"}`, string(res.Data))
	res = env.Do(t, http.MethodGet, "/v2/lead/job/"+asynccreate.NewIDs("another secret").New(7).String(), nil)
	assert.Equal(t, http.StatusNotFound, res.Status)
	res = env.Do(t, http.MethodGet, "/v2/lead/job/"+acc.JobID, nil, "X-User-Id", "8")
	assert.Equal(t, http.StatusNotFound, res.Status, "another user's job answers like none")
	res = env.Do(t, http.MethodGet, "/v2/lead/job/123", nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)

	res = env.Do(t, http.MethodPost, "/v1/lead/create-async", map[string]any{"lead_type": "straight"})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "client_phone")
}

func TestInternalLeads(t *testing.T) {
	orderID, code := newOrder(t)
	id := create(t, body(orderID, code, "79161230040"))
	res := env.Do(t, http.MethodGet, "/internal/leads?orderId="+strconv.FormatInt(orderID, 10)+"&limit=5", nil)
	require.Equal(t, http.StatusOK, res.Status)
	assert.JSONEq(t, fmt.Sprintf(`{"list":[{"id":%d,"phone":"+79161230040","orderId":%d}]}`, id, orderID), string(res.Data))
	res = env.Do(t, http.MethodGet, "/internal/leads?limit=0", nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestTimesOutsideTheStoredYearsAreRefused(t *testing.T) {
	orderID, code := newOrder(t)
	id := create(t, body(orderID, code, "79161230020"))
	path := "/v2/lead/update/" + strconv.FormatInt(id, 10)
	before, err := env.Leads.Get(context.Background(), id)
	require.NoError(t, err)
	for _, at := range []string{"9999-12-31T23:59:59-14:00", "0000-06-01T00:00:00Z"} {
		res := env.Do(t, http.MethodPost, path, map[string]any{"planningCallDateTime": at})
		require.Equal(t, http.StatusBadRequest, res.Status, at)
		assert.Equal(t, map[string]string{"planningCallDateTime": apitime.RangeRule}, res.Errors(), at)
	}
	after, err := env.Leads.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, before.UpdatedAt, after.UpdatedAt, "a refused update changes nothing")

	res := env.Do(t, http.MethodPost, path, map[string]any{"planningCallDateTime": "9999-12-31T23:59:59+00:00"})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	res = env.Do(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(id, 10)+"/", nil)
	assert.Contains(t, string(res.Data), `"planningCallDateTime":"9999-12-31T23:59:59+00:00"`)

	res = env.Do(t, http.MethodGet, "/v2/lead?createdAt[0]=0000-06-01", nil)
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{"createdAt[0]": apitime.RangeRule}, res.Errors())
}
