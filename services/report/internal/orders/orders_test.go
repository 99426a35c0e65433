package orders_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/services/report/internal/orders"
	"ccplatform/services/report/internal/servicetest"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "report_orders", func(e *servicetest.Env) { env = e })
}

func rowsOf(t *testing.T, data json.RawMessage) []orders.Row {
	t.Helper()
	var v struct {
		List []orders.Row `json:"list"`
	}
	require.NoError(t, json.Unmarshal(data, &v))
	return v.List
}

// Calls and lead events published on the events exchange reach the report: a call counts in the
// hour it started, a duplicate (same eventId) once, the lead events of a group each, and every
// hour of the period is there, with zeros where nothing happened.
func TestEventsAddUpIntoTheOrdersReportOnce(t *testing.T) {
	pub := env.Consume(t)
	order := 1_000_000 + rand.Int64N(1_000_000_000) // an order of this run alone (-count)
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	dup := uuid.NewString()
	pub.Publish(t, "call.finished", "call.finished", servicetest.CallFinished(dup, order, 1, 7, "answered", day.Add(9*time.Hour+10*time.Minute), 100))
	pub.Publish(t, "call.finished", "call.finished", servicetest.CallFinished(dup, order, 1, 7, "answered", day.Add(9*time.Hour+10*time.Minute), 100))
	pub.Publish(t, "call.finished", "call.finished", servicetest.CallFinished(uuid.NewString(), order, 2, 7, "abandoned", day.Add(9*time.Hour+50*time.Minute), 3))
	pub.Publish(t, "call.finished", "call.finished", servicetest.CallFinished(uuid.NewString(), order, 1, 7, "no_answer", day.Add(11*time.Hour), 0))
	var group [][]byte
	for _, ev := range []event.Event{
		servicetest.LeadEvent(uuid.NewString(), "lead.created", order, 1, day.Add(8*time.Hour)),
		servicetest.LeadEvent(uuid.NewString(), "lead.created", order, 1, day.Add(8*time.Hour)),
	} {
		b, _ := json.Marshal(ev)
		group = append(group, b)
	}
	pub.Publish(t, "lead.created", event.GroupType, mq.JoinGroup(group))
	qualified, _ := json.Marshal(servicetest.LeadEvent(uuid.NewString(), "lead.status_changed", order, 4, day.Add(9*time.Hour+20*time.Minute)))
	pub.Publish(t, "lead.status_changed", "lead.status_changed", qualified)

	path := fmt.Sprintf("/v2/report/orders?orderIds[]=%d&from=2026-11-20&to=2026-11-21&interval=hour", order)
	var rows []orders.Row
	servicetest.Eventually(t, 10*time.Second, func() bool {
		res := env.Do(t, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, res.Status, res.Message)
		rows = rowsOf(t, res.Data)
		total := int64(0)
		for _, r := range rows {
			total += r.Calls + r.Statuses["1"] + r.Statuses["4"]
		}
		return total == 3+2+1
	}, "the events are counted")
	require.Len(t, rows, 24)
	nine := rows[9]
	assert.Equal(t, "2026-11-20T09:00:00Z", nine.From)
	assert.Equal(t, int64(2), nine.Calls, "the duplicate counts once")
	assert.Equal(t, int64(2), nine.Answered)
	assert.Equal(t, int64(1), nine.Abandoned)
	assert.Equal(t, 0.5, nine.AbandonRate)
	assert.Equal(t, 1.0, nine.ContactRate)
	assert.Equal(t, int64(103), nine.TalkSeconds)
	assert.Equal(t, 103.0, nine.AvgHandleSeconds, "talk per call an agent took")
	assert.Equal(t, int64(2), nine.LeadsCalled)
	assert.Equal(t, int64(1), nine.Conversions)
	assert.Equal(t, int64(2), rows[8].Statuses["1"])
	assert.Equal(t, int64(1), rows[11].Calls)
	assert.Equal(t, orders.Row{OrderID: order, From: "2026-11-20T00:00:00Z", To: "2026-11-20T01:00:00Z", Statuses: rows[0].Statuses}, rows[0], "an hour without data is zeros")

	res := env.Do(t, http.MethodGet, fmt.Sprintf("/v2/report/orders?orderIds[]=%d&from=2026-11-20T09:00:00%%2B03:00&to=2026-11-21T00:00:00%%2B03:00&interval=total&tz=Europe/Moscow", order), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	total := rowsOf(t, res.Data)
	require.Len(t, total, 1)
	assert.Equal(t, int64(3), total[0].Calls)
	assert.Equal(t, int64(2), total[0].LeadsCalled, "a lead called in two hours is one lead")
	assert.Equal(t, "2026-11-20T09:00:00+03:00", total[0].From)

	csv := env.Raw(t, http.MethodGet, path, nil, "Accept", "text/csv")
	require.Equal(t, http.StatusOK, csv.Code)
	assert.Equal(t, "text/csv; charset=utf-8", csv.Header().Get("Content-Type"))
	lines := strings.Split(strings.TrimSpace(csv.Body.String()), "\n")
	require.Len(t, lines, 25, "a header and 24 hours")
	assert.Equal(t, "orderId,from,to,calls,answered,contactRate,abandoned,abandonRate,talkSeconds,avgHandleSeconds,leadsCalled,conversions,callsPerAgentHour,status_1,status_2,status_3,status_4,status_5,status_6,status_7,status_8,status_9", lines[0])
	assert.Equal(t, fmt.Sprint(order)+",2026-11-20T09:00:00Z,2026-11-20T10:00:00Z,2,2,1,1,0.5,103,103,2,1,0,0,0,0,1,0,0,0,0,0", lines[10])
}

// A client sees its own orders only: naming another's gives nothing, naming none gives each of its
// own orders, zero-filled.
func TestAClientSeesItsOwnOrders(t *testing.T) {
	env.Peers.SetOrders(801, 11, 12)
	client := env.As("801", "client")
	res := client.Do(t, http.MethodGet, "/v2/report/orders?orderIds[]=13&from=2026-11-20&to=2026-11-21&interval=day", nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Empty(t, rowsOf(t, res.Data))
	res = client.Do(t, http.MethodGet, "/v2/report/orders?from=2026-11-20&to=2026-11-22&interval=day", nil)
	rows := rowsOf(t, res.Data)
	require.Len(t, rows, 4)
	assert.Equal(t, []int64{11, 11, 12, 12}, []int64{rows[0].OrderID, rows[1].OrderID, rows[2].OrderID, rows[3].OrderID})
}

// A report that would pass period.MaxRows is a 400 naming the rule, before it is written.
func TestAReportOfTooManyRowsIsRefused(t *testing.T) {
	var ids []string
	for i := range 100 {
		ids = append(ids, fmt.Sprintf("orderIds[]=%d", 9_000_000+i))
	}
	res := env.Do(t, http.MethodGet, "/v2/report/orders?"+strings.Join(ids, "&")+"&from=2026-10-01&to=2026-10-31&interval=hour", nil)
	require.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, "the report would have 72000 rows, more than 50000: name fewer orders (orderIds[]) or take a longer interval", res.Errors()["interval"])
}

// Bad parameters are a 400 naming the parameter and its rule.
func TestBadParametersAreNamed(t *testing.T) {
	for query, field := range map[string]string{
		"from=2026-10-01&to=2026-11-02":               "to",
		"from=2026-11-01&to=2026-11-02&tz=Nowhere/X":  "tz",
		"from=2026-11-01&to=2026-11-02&interval=week": "interval",
		"orderIds[]=-1&from=2026-11-01&to=2026-11-02": "orderIds[]",
		"to=2026-11-02": "from",
	} {
		res := env.Do(t, http.MethodGet, "/v2/report/orders?"+query, nil)
		assert.Equal(t, http.StatusBadRequest, res.Status, query)
		assert.Contains(t, res.Errors(), field, query)
	}
}
