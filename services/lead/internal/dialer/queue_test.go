package dialer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/dialer"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/servicetest"

	"github.com/google/uuid"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "lead_dialer", func(e *servicetest.Env) { env = e })
}

// Lead status ids of migration 00001.
const statusNew, statusQualified, statusRejected = 1, 4, 5

// monday is Monday 23 November 2026 12:00 UTC: inside 09:00–18:00 from -3 to +5.
var monday = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

var orderSeq, phoneSeq atomic.Int64

// newOrder is an auto-dialing order known to the order cache, calling Monday to Friday
// 09:00–18:00, not on Tuesday 24 November 2026; change edits it first.
func newOrder(t *testing.T, change func(*orders.Order)) orders.Order {
	t.Helper()
	id := 7000 + orderSeq.Add(1)
	day := []string{"09:00", "18:00"}
	o := orders.Order{ID: id, Code: "dial-" + strconv.FormatInt(id, 10), AutoDialingEnabled: true,
		CallSchedule:         [][]string{day, day, day, day, day, {}, {}},
		CallHolidayOverrides: []string{"24.11.2026"},
		CallAttemptGroup:     &orders.AttemptGroup{ID: 1, Intervals: []int64{30, 120}},
	}
	if change != nil {
		change(&o)
	}
	env.Orders.Remember(o)
	return o
}

func newPhone() string { return fmt.Sprintf("+7916%07d", 1000000+phoneSeq.Add(1)) }

// row is a lead written straight into the table, with what the queue reads.
type row struct {
	phone     string
	status    int
	priority  int
	offset    *int
	planning  *time.Time
	secondary bool
	lastCall  *time.Time // the end of its latest call; nil: never called
}

func offset(h int) *int { return &h }

func at(t time.Time) *time.Time { return &t }

func insert(t *testing.T, o orders.Order, r row) int64 {
	t.Helper()
	if r.phone == "" {
		r.phone = newPhone()
	}
	if r.status == 0 {
		r.status = statusNew
	}
	var id int64
	require.NoError(t, env.DB.Get(&id, `
INSERT INTO leads (order_id, order_code, phone, status_id, lead_type, create_method, priority, utc_offset, planning_call_at, is_secondary, last_call_ended_at)
VALUES ($1, $2, $3, $4, 'straight', 'api_v2', $5, $6, $7, $8, $9) RETURNING id`,
		o.ID, o.Code, r.phone, r.status, r.priority, r.offset, r.planning, r.secondary, r.lastCall))
	return id
}

type leased struct {
	LeaseID        *string `json:"leaseId"`
	LeaseExpiresAt *string `json:"leaseExpiresAt"`
	List           []struct {
		LeaseID  string `json:"leaseId"`
		ID       int64  `json:"id"`
		Phone    string `json:"phone"`
		Priority int64  `json:"priority"`
	} `json:"list"`
}

func (l leased) ids() []int64 {
	out := []int64{}
	for _, x := range l.List {
		out = append(out, x.ID)
	}
	return out
}

func lease(t *testing.T, o orders.Order, limit int, extra ...any) leased {
	t.Helper()
	body := map[string]any{"orderId": o.ID, "limit": limit, "dialerId": "test"}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	res := env.Do(t, http.MethodPost, "/v2/dialer/lease", body)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var out leased
	require.NoError(t, json.Unmarshal(res.Data, &out))
	return out
}

func TestLeaseHandsOutTheDueLeadsInQueueOrder(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := newOrder(t, nil)
	unplanned := insert(t, o, row{offset: offset(3)})
	planned := insert(t, o, row{priority: 5, offset: offset(3), planning: at(monday.Add(-time.Hour))})
	earlier := insert(t, o, row{priority: 5, offset: offset(0), planning: at(monday.Add(-2 * time.Hour))})
	insert(t, o, row{planning: at(monday.Add(time.Hour))})                          // not due yet
	insert(t, o, row{status: statusQualified})                                      // final
	insert(t, o, row{status: statusRejected, planning: at(monday.Add(-time.Hour))}) // final
	insert(t, o, row{offset: offset(9)})                                            // 21:00 there
	unknownZone := insert(t, o, row{planning: at(monday.Add(-time.Minute))})        // read in UTC: 12:00
	// Called, and no next call: attempts used up, or answered and waiting for a disposition.
	insert(t, o, row{status: statusNew, offset: offset(3), lastCall: at(monday.Add(-time.Hour))})
	calledAgain := insert(t, o, row{offset: offset(3), planning: at(monday.Add(-3 * time.Minute)), lastCall: at(monday.Add(-time.Hour))})
	dncOrder, dncGlobal, dncExpired := newPhone(), newPhone(), newPhone()
	insert(t, o, row{phone: dncOrder})
	insert(t, o, row{phone: dncGlobal})
	expired := insert(t, o, row{phone: dncExpired})
	_, err := env.DB.Exec(`INSERT INTO dnc_entries (phone, order_id, expires_at) VALUES ($1, $2, NULL), ($3, NULL, NULL), ($4, NULL, $5)`,
		dncOrder, o.ID, dncGlobal, dncExpired, monday.Add(-time.Minute))
	require.NoError(t, err)
	shared := newPhone()
	primary := insert(t, o, row{phone: shared})
	secondary := insert(t, o, row{phone: shared, secondary: true})

	got := lease(t, o, 100)
	require.NotNil(t, got.LeaseID)
	assert.Equal(t, []int64{earlier, planned, unplanned, expired, primary, calledAgain, unknownZone}, got.ids(),
		"priority, unplanned (never called) first, planned time, id; one lead of a phone")
	for _, l := range got.List {
		assert.Equal(t, *got.LeaseID, l.LeaseID)
	}
	assert.Equal(t, "2026-11-23T12:02:00+00:00", *got.LeaseExpiresAt, "120 s by default")

	// The secondary lead waits while its primary is leased; nothing else is due.
	again := lease(t, o, 100)
	assert.Empty(t, again.List)
	assert.Nil(t, again.LeaseID, "no lease without leads")

	// Released, the primary is due again (before the secondary, by id); the secondary only when
	// the primary is leased no more.
	res := env.Do(t, http.MethodPost, "/v2/dialer/release", map[string]any{"leaseId": *got.LeaseID, "leadIds": []int64{primary}})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.JSONEq(t, fmt.Sprintf(`{"leaseId":%q,"leadIds":[%d]}`, *got.LeaseID, primary), string(res.Data))
	assert.Equal(t, []int64{primary}, lease(t, o, 100).ids())
	_, err = env.DB.Exec(`UPDATE leads SET status_id = $2 WHERE id = $1`, primary, statusQualified)
	require.NoError(t, err)
	_, err = env.DB.Exec(`UPDATE leads SET lease_id = NULL, leased_until = NULL WHERE id = $1`, primary)
	require.NoError(t, err)
	assert.Equal(t, []int64{secondary}, lease(t, o, 100).ids())

	// A phone added to the list is not leased from the next lease on.
	res = env.Do(t, http.MethodPost, "/v2/dialer/release", map[string]any{"leaseId": *got.LeaseID})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var rel struct{ LeadIDs []int64 }
	require.NoError(t, json.Unmarshal(res.Data, &rel))
	assert.ElementsMatch(t, []int64{earlier, planned, unplanned, expired, calledAgain, unknownZone}, rel.LeadIDs, "the rest of the lease")
	_, err = env.DB.Exec(`INSERT INTO dnc_entries (phone, order_id) SELECT phone, NULL FROM leads WHERE id = $1`, earlier)
	require.NoError(t, err)
	assert.Equal(t, []int64{planned, unplanned, expired, calledAgain, unknownZone}, lease(t, o, 100).ids())
}

// A lease that gives a lead back (the second lead of a phone it already holds) makes it up from
// the rest of the queue: it asks for two and gets two, though the first two due share a phone.
func TestALeadGivenBackIsMadeUpFromTheQueue(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := newOrder(t, nil)
	phone := newPhone()
	primary := insert(t, o, row{phone: phone})
	secondary := insert(t, o, row{phone: phone, secondary: true})
	_, err := env.DB.Exec(`UPDATE leads SET next_lead_id = $2 WHERE id = $1`, primary, secondary)
	require.NoError(t, err)
	other := insert(t, o, row{})

	assert.Equal(t, []int64{primary, other}, lease(t, o, 2).ids())
	var held []int64
	require.NoError(t, env.DB.Select(&held, `SELECT id FROM leads WHERE order_id = $1 AND lease_id IS NOT NULL ORDER BY id`, o.ID))
	assert.Equal(t, []int64{primary, other}, held, "the secondary lead was given back")
}

func TestLeaseOutsideTheWindowOrWithoutAutoDialing(t *testing.T) {
	o := newOrder(t, nil)
	insert(t, o, row{offset: offset(3)})
	env.SetNow(monday.Add(-6 * time.Hour)) // 09:00 at +3: the window opens
	defer env.SetNow(time.Time{})
	assert.Len(t, lease(t, o, 10).List, 1)
	o2 := newOrder(t, nil)
	insert(t, o2, row{offset: offset(3)})
	env.SetNow(monday.Add(-6*time.Hour - time.Second)) // 08:59:59 there
	assert.Empty(t, lease(t, o2, 10).List)
	env.SetNow(monday.Add(24 * time.Hour)) // Tuesday: a holiday
	assert.Empty(t, lease(t, o2, 10).List)
	env.SetNow(monday)
	assert.Len(t, lease(t, o2, 10).List, 1)

	off := newOrder(t, func(o *orders.Order) { o.AutoDialingEnabled = false })
	insert(t, off, row{})
	assert.Empty(t, lease(t, off, 10).List)
}

func TestAnExpiredLeaseGivesItsLeadsBackAndExtendKeepsThem(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := newOrder(t, nil)
	a, b := insert(t, o, row{}), insert(t, o, row{})
	first := lease(t, o, 10, "leaseSeconds", 60)
	require.Equal(t, []int64{a, b}, first.ids())

	env.SetNow(monday.Add(30 * time.Second))
	assert.Empty(t, lease(t, o, 10).List)
	res := env.Do(t, http.MethodPost, "/v2/dialer/extend", map[string]any{"leaseId": *first.LeaseID, "leaseSeconds": 60})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.JSONEq(t, fmt.Sprintf(`{"leaseId":%q,"leaseExpiresAt":"2026-11-23T12:01:30+00:00","leadIds":[%d,%d]}`, *first.LeaseID, a, b), string(res.Data))

	env.SetNow(monday.Add(61 * time.Second))
	assert.Empty(t, lease(t, o, 10).List, "extended to 12:01:30")
	env.SetNow(monday.Add(90 * time.Second))
	second := lease(t, o, 10)
	assert.Equal(t, []int64{a, b}, second.ids(), "expired at 12:01:30: leased again")

	// The first lease holds nothing any more: extending it keeps nothing, releasing it frees nothing.
	res = env.Do(t, http.MethodPost, "/v2/dialer/extend", map[string]any{"leaseId": *first.LeaseID})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Contains(t, string(res.Data), `"leadIds":[]`)
	res = env.Do(t, http.MethodPost, "/v2/dialer/release", map[string]any{"leaseId": *first.LeaseID})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Contains(t, string(res.Data), `"leadIds":[]`)
	assert.Empty(t, lease(t, o, 10).List, "the second lease still holds them")

	res = env.Do(t, http.MethodPost, "/v2/dialer/release", map[string]any{"leaseId": uuid.NewString()})
	assert.Equal(t, http.StatusNotFound, res.Status)
	res = env.Do(t, http.MethodPost, "/v2/dialer/extend", map[string]any{"leaseId": "x", "leaseSeconds": 1})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{"leaseId": "must be a leaseId a lease answered (a UUID)", "leaseSeconds": "must be an integer from 10 to 3600"}, res.Errors())
}

func TestLeaseIsRefusedForItsBody(t *testing.T) {
	res := env.Do(t, http.MethodPost, "/v2/dialer/lease", map[string]any{"orderId": "1", "limit": 0})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Contains(t, res.Errors(), "orderId")
	res = env.Do(t, http.MethodPost, "/v2/dialer/lease", map[string]any{"orderId": 1, "limit": 0, "leaseSeconds": 5000})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{"limit": "must be an integer from 1 to 100", "leaseSeconds": "must be an integer from 10 to 3600", "dialerId": "is required"}, res.Errors())
}

func TestTheQualifiedLeadsPerDayLimitStopsTheDaysLeases(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	limit := int64(1)
	o := newOrder(t, func(o *orders.Order) { o.QualifiedLeadsPerDayLimit = &limit })
	due := insert(t, o, row{})
	won := insert(t, o, row{status: statusQualified})
	_, err := env.DB.Exec(`UPDATE leads SET status_changed_at = $2 WHERE id = $1`, won, monday.Add(-11*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, lease(t, o, 10).List, "one lead qualified today (UTC)")
	_, err = env.DB.Exec(`UPDATE leads SET status_changed_at = $2 WHERE id = $1`, won, monday.Add(-13*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []int64{due}, lease(t, o, 10).ids(), "qualified yesterday")
}

func TestTheCallOfALeasedLeadEndsItsLease(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := newOrder(t, nil)
	id := insert(t, o, row{offset: offset(3)})
	require.Equal(t, []int64{id}, lease(t, o, 1).ids())
	rules, err := callresult.RulesOf(o)
	require.NoError(t, err)
	store := callresult.NewStore(env.DB, env.Catalog)
	_, err = store.Apply(context.Background(), []callresult.Item{{Rules: rules, Event: callresult.Finished{
		EventID: uuid.NewString(), CallID: 900000 + id, LeadID: id, OrderID: o.ID, Outcome: callresult.OutcomeNoAnswer,
		EndedAt: monday.Add(-time.Minute)}}})
	require.NoError(t, err)
	var st struct {
		LeaseID  *string    `db:"lease_id"`
		Planning *time.Time `db:"planning_call_at"`
	}
	require.NoError(t, env.DB.Get(&st, `SELECT lease_id, planning_call_at FROM leads WHERE id = $1`, id))
	assert.Nil(t, st.LeaseID, "the call ended the lease")
	require.NotNil(t, st.Planning)
	assert.Equal(t, monday.Add(29*time.Minute), st.Planning.UTC(), "30 minutes after the call's end")
	assert.Empty(t, lease(t, o, 1).List, "not due before its next call")
	env.SetNow(monday.Add(29 * time.Minute))
	assert.Equal(t, []int64{id}, lease(t, o, 1).ids())
}

// An abandoned call locks its number out for the order's dropLockoutHours: the lease skips the
// lead until then, and hands it out after.
func TestADropLockoutKeepsTheLeadOutOfTheLease(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := newOrder(t, func(o *orders.Order) { o.DropLockoutHours = 72 })
	id := insert(t, o, row{offset: offset(3)})
	require.Equal(t, []int64{id}, lease(t, o, 1).ids())
	rules, err := callresult.RulesOf(o)
	require.NoError(t, err)
	_, err = callresult.NewStore(env.DB, env.Catalog).Apply(context.Background(), []callresult.Item{{Rules: rules,
		Event: callresult.Finished{EventID: uuid.NewString(), CallID: 910000 + id, LeadID: id, OrderID: o.ID,
			Outcome: callresult.OutcomeAbandoned, EndedAt: monday.Add(-time.Hour), Outgoing: true, Answered: true}}})
	require.NoError(t, err)
	// The abandoned call plans the next call after the first interval (30 minutes).
	env.SetNow(monday.Add(time.Hour))
	assert.Empty(t, lease(t, o, 1).List, "locked out until Thursday 11:00")
	thursday := monday.Add(71 * time.Hour) // 11:00 UTC, 14:00 at +3
	env.SetNow(thursday.Add(-time.Second))
	assert.Empty(t, lease(t, o, 1).List, "a second before the lockout ends")
	env.SetNow(thursday)
	assert.Equal(t, []int64{id}, lease(t, o, 1).ids(), "the lockout is over")
}

func TestEightLeasersHandOutTenThousandLeadsExactlyOnce(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := newOrder(t, nil)
	const n = 10_000
	_, err := env.DB.Exec(`
INSERT INTO leads (order_id, order_code, phone, status_id, lead_type, create_method, priority, planning_call_at)
SELECT $1, $2, '+7495' || lpad(i::text, 7, '0'), 1, 'straight', 'api_v2', i % 3, $3::timestamptz - i * interval '1 second'
FROM generate_series(1, $4) AS i`, o.ID, o.Code, monday, n)
	require.NoError(t, err)
	// With the due leads in the table, the lease statement reads the queue's index in lease order
	// (no sort of the due leads, no scan of the table).
	_, err = env.DB.Exec(`ANALYZE leads`)
	require.NoError(t, err)
	var plan []string
	require.NoError(t, env.DB.Select(&plan, `EXPLAIN `+dialer.LeaseDue, o.ID, monday, pq.Int64Array{0, 3}, true, 50,
		uuid.NewString(), monday.Add(time.Minute)))
	text := strings.Join(plan, "\n")
	assert.Contains(t, text, "leads_dial_queue", text)
	assert.NotContains(t, text, "Seq Scan on leads", text)
	assert.NotContains(t, text, "Sort", text)

	var mu sync.Mutex
	seen := make(map[int64]int, n)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for d := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				res := env.Do(t, http.MethodPost, "/v2/dialer/lease", map[string]any{"orderId": o.ID, "limit": 50, "dialerId": "d" + strconv.Itoa(d)})
				var got leased
				if res.Status != http.StatusOK || json.Unmarshal(res.Data, &got) != nil {
					failed.Store(true)
					t.Errorf("lease: %d %s", res.Status, res.Message)
					return
				}
				if len(got.List) == 0 {
					return
				}
				mu.Lock()
				for _, l := range got.List {
					seen[l.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Len(t, seen, n, "every lead handed out")
	twice := 0
	for _, c := range seen {
		if c > 1 {
			twice++
		}
	}
	assert.Zero(t, twice, "no lead handed out twice")
}

// Leases racing for the two leads of one phone (a primary and its secondary): while one of them
// is leased the other is not, so each phone is handed out once while the leases last.
func TestConcurrentLeasesNeverHandOutTwoLeadsOfOnePhone(t *testing.T) {
	env.SetNow(monday)
	defer env.SetNow(time.Time{})
	o := newOrder(t, nil)
	const phones = 2_000
	// A primary and its secondary, linked as lead creation links them (next_lead_id).
	_, err := env.DB.Exec(`
INSERT INTO leads (order_id, order_code, phone, status_id, lead_type, create_method)
SELECT $1, $2, '+7812' || lpad(i::text, 7, '0'), 1, 'straight', 'api_v2' FROM generate_series(1, $3) AS i`, o.ID, o.Code, phones)
	require.NoError(t, err)
	_, err = env.DB.Exec(`
INSERT INTO leads (order_id, order_code, phone, status_id, lead_type, create_method, is_secondary)
SELECT order_id, order_code, phone, 1, 'straight', 'api_v2', true FROM leads WHERE order_id = $1`, o.ID)
	require.NoError(t, err)
	_, err = env.DB.Exec(`
UPDATE leads p SET next_lead_id = s.id FROM leads s
WHERE p.order_id = $1 AND s.order_id = $1 AND s.phone = p.phone AND s.is_secondary AND NOT p.is_secondary`, o.ID)
	require.NoError(t, err)

	var mu sync.Mutex
	perPhone := make(map[string]int, phones)
	var wg sync.WaitGroup
	for d := range 8 {
		wg.Go(func() {
			// An empty answer while other leases are taking the last leads is not the end of the
			// queue: like a dialer, poll again once before stopping.
			for empty := 0; empty < 2; {
				res := env.Do(t, http.MethodPost, "/v2/dialer/lease", map[string]any{"orderId": o.ID, "limit": 50, "dialerId": "p" + strconv.Itoa(d)})
				var got leased
				if res.Status != http.StatusOK || json.Unmarshal(res.Data, &got) != nil {
					t.Errorf("lease: %d %s", res.Status, res.Message)
					return
				}
				if len(got.List) == 0 {
					empty++
					time.Sleep(20 * time.Millisecond)
					continue
				}
				empty = 0
				mu.Lock()
				for _, l := range got.List {
					perPhone[l.Phone]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if !assert.Len(t, perPhone, phones, "every phone handed out") {
		var left []string
		require.NoError(t, env.DB.Select(&left, `
SELECT phone || ' ' || string_agg(id || ':' || coalesce(lease_id::text, '-') || ':' || coalesce(leased_until::text, '-'), ' ')
FROM leads WHERE order_id = $1 GROUP BY phone HAVING bool_and(lease_id IS NULL) LIMIT 5`, o.ID))
		t.Logf("phones never handed out (lead:lease:until): %q", left)
	}
	for phone, n := range perPhone {
		if !assert.Equal(t, 1, n, "phone %s handed out in two leads at once", phone) {
			break
		}
	}
}

func TestDialableStatusesAreTheInProgressOnes(t *testing.T) {
	statuses, err := env.Catalog.Statuses(context.Background())
	require.NoError(t, err)
	for id, st := range statuses {
		var dialable bool
		require.NoError(t, env.DB.Get(&dialable, `SELECT lead_dialable($1)`, id))
		assert.Equal(t, st.Category == "in_progress", dialable, "status %d %s: lead_dialable (migration 00008) and the catalog disagree", id, st.Code)
	}
}
