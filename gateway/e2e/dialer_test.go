package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clockFile is where lead-api reads the dialing queue's time (CLOCK_FILE); absent, it is the real
// time. The tests that set it run one at a time (clockMu).
var (
	clockFile string
	clockMu   sync.Mutex
)

// fixClock sets the dialing queue's time to at until the test ends.
func fixClock(t *testing.T) func(time.Time) {
	t.Helper()
	clockMu.Lock()
	t.Cleanup(func() {
		_ = os.Remove(clockFile)
		clockMu.Unlock()
	})
	return func(at time.Time) {
		tmp := clockFile + ".tmp"
		require.NoError(t, os.WriteFile(tmp, []byte(at.UTC().Format(time.RFC3339)), 0o600))
		require.NoError(t, os.Rename(tmp, clockFile))
	}
}

// dialingOrder is callingOrder (Monday to Friday 09:00–18:00, not on Tuesday 24 November 2026,
// again 30 minutes after the first call and 2 hours after the second) with auto-dialing on.
func dialingOrder(t *testing.T, title string, opts ...Option) (int64, string) {
	t.Helper()
	r := stack.Call(t, http.MethodPost, "/v2/call-attempt/create/", map[string]any{"title": title, "intervals": []int{30, 120}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	day := []string{"09:00", "18:00"}
	body := minimalOrder(title)
	body["callAttemptGroupId"] = r.Data(t)["id"]
	body["callSchedule"] = [][]string{day, day, day, day, day, {}, {}}
	body["callHolidayOverrides"] = []string{"2026-11-24"}
	body["autoDialingEnabled"] = true
	id := createOrder(t, body, opts...)
	return id, orderDetail(t, id)["code"].(string)
}

type leaseAnswer struct {
	LeaseID *string `json:"leaseId"`
	List    []struct {
		ID       int64  `json:"id"`
		LeaseID  string `json:"leaseId"`
		Phone    string `json:"phone"`
		Attempts int    `json:"attempts"`
	} `json:"list"`
}

func leaseOf(t *testing.T, orderID int64, extra map[string]any, opts ...Option) (leaseAnswer, Response) {
	t.Helper()
	body := map[string]any{"orderId": orderID, "limit": 100, "dialerId": "e2e"}
	for k, v := range extra {
		body[k] = v
	}
	r := stack.Call(t, http.MethodPost, "/v2/dialer/lease/", body, opts...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var a leaseAnswer
	require.NoError(t, json.Unmarshal(r.Env.Data, &a))
	return a, r
}

func (a leaseAnswer) ids() []int64 {
	out := []int64{}
	for _, l := range a.List {
		out = append(out, l.ID)
	}
	return out
}

func TestALeadIsLeasedCalledAndLeasedAgainWhenDue(t *testing.T) {
	setClock := fixClock(t)
	platform := newTelephonyPlatform(t)
	orderID, code := dialingOrder(t, "Dialing queue")
	lead := createLead(t, "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "utcOffset", 3))
	monday := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

	// 17:40 at +3: inside the window; leased once, with its key replayed rather than leased again.
	setClock(monday.Add(14*time.Hour + 40*time.Minute))
	first, r := leaseOf(t, orderID, nil, WithHeader("Idempotency-Key", "e2e-lease-"+strconv.FormatInt(lead, 10)))
	require.Equal(t, []int64{lead}, first.ids())
	replay, r2 := leaseOf(t, orderID, nil, WithHeader("Idempotency-Key", "e2e-lease-"+strconv.FormatInt(lead, 10)))
	assert.Equal(t, "true", r2.Header.Get("Idempotent-Replayed"))
	assert.Equal(t, string(r.Env.Data), string(r2.Env.Data))
	assert.Equal(t, first.ids(), replay.ids())
	again, _ := leaseOf(t, orderID, nil)
	assert.Empty(t, again.List, "leased: no other dialer gets it")

	// The dialer calls at 17:45 there, nobody answers: 30 minutes later the window has closed and
	// Tuesday is a holiday, so the next call is Wednesday 09:00 at +3; the call ended the lease.
	platform.send(t, endingAt(lead, orderID, telephony.StatusNoAnswer, monday.Add(14*time.Hour+45*time.Minute)))
	waitLead(t, lead, 3, "2026-11-25T06:00:00+00:00")
	r = stack.Call(t, http.MethodPost, "/v2/dialer/release/", map[string]any{"leaseId": *first.LeaseID})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, fmt.Sprintf(`{"leaseId":%q,"leadIds":[]}`, *first.LeaseID), string(r.Env.Data), "the call ended the lease already")

	setClock(monday.Add(14*time.Hour + 50*time.Minute))
	a, _ := leaseOf(t, orderID, nil)
	assert.Empty(t, a.List, "not due before Wednesday 09:00 at +3")
	setClock(time.Date(2026, 11, 25, 5, 59, 59, 0, time.UTC))
	a, _ = leaseOf(t, orderID, nil)
	assert.Empty(t, a.List)
	setClock(time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC))
	a, _ = leaseOf(t, orderID, nil)
	require.Equal(t, []int64{lead}, a.ids(), "due now")
	assert.Equal(t, 1, a.List[0].Attempts)
}

func TestOutOfWindowAndDoNotCallLeadsAreNotLeased(t *testing.T) {
	setClock := fixClock(t)
	orderID, code := dialingOrder(t, "Dialing windows")
	moscow := createLead(t, "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "utcOffset", 3))
	london := createLead(t, "/v2/lead/create/", with(v2Lead(orderID, code, newPhone()), "utcOffset", 0))
	blocked := newPhone()
	listed := createLead(t, "/v2/lead/create/", with(v2Lead(orderID, code, blocked), "utcOffset", 3))

	r := stack.Call(t, http.MethodPost, "/v2/dnc/create/", map[string]any{"phones": []string{"+" + blocked}, "orderId": orderID, "reason": "e2e"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, true, leadDetail(t, listed)["doNotCall"], "kept, and marked")
	assert.Equal(t, false, leadDetail(t, moscow)["doNotCall"])

	// Monday 06:30 UTC: 09:30 in Moscow, 06:30 in London.
	setClock(time.Date(2026, 11, 23, 6, 30, 0, 0, time.UTC))
	a, _ := leaseOf(t, orderID, map[string]any{"leaseSeconds": 10})
	assert.Equal(t, []int64{moscow}, a.ids(), "London is outside the window, the listed phone never leased")

	// The lease expires after 10 s and gives the lead back; by 09:00 in London that lead is due too.
	setClock(time.Date(2026, 11, 23, 6, 30, 9, 0, time.UTC))
	a, _ = leaseOf(t, orderID, nil)
	assert.Empty(t, a.List)
	setClock(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	a, _ = leaseOf(t, orderID, nil)
	assert.ElementsMatch(t, []int64{moscow, london}, a.ids(), "the expired lease gave Moscow back")

	r = stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/dnc/check/?phone=%%2B%s&orderId=%d", blocked, orderID), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, true, r.Data(t)["doNotCall"])
	r = stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/dnc/?orderId=%d", orderID), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.EqualValues(t, 1, r.Data(t)["total"])
	r = stack.Call(t, http.MethodPost, "/v2/dnc/delete/", map[string]any{"phones": []string{blocked}, "orderId": orderID})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	a, _ = leaseOf(t, orderID, nil)
	assert.Equal(t, []int64{listed}, a.ids(), "off the list, due")
}

func TestAClientDialsAndListsOnlyItsOwnOrders(t *testing.T) {
	setClock := fixClock(t)
	setClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	client := newMember(t, "client@dialer.e2e", "client")
	own, ownCode := dialingOrder(t, "Client's dialing", WithKey(client.key))
	other, otherCode := dialingOrder(t, "Someone else's dialing")
	otherLead := createLead(t, "/v2/lead/create/", v2Lead(other, otherCode, newPhone()))
	lead := createLead(t, "/v2/lead/create/", v2Lead(own, ownCode, newPhone()), WithKey(client.key))

	a, _ := leaseOf(t, own, nil, WithKey(client.key))
	assert.Equal(t, []int64{lead}, a.ids())
	r := stack.Call(t, http.MethodPost, "/v2/dialer/lease/", map[string]any{"orderId": other, "limit": 1, "dialerId": "c"}, WithKey(client.key))
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, map[string]string{"orderId": fmt.Sprintf("no order has id %d", other)}, r.Errors(t))
	r = stack.Call(t, http.MethodPost, "/v2/dialer/lease/", map[string]any{"orderId": 999999999, "limit": 1, "dialerId": "c"})
	assert.Equal(t, http.StatusBadRequest, r.Status, "an order that does not exist")

	// The admin's lease of the other order is not the client's to release: it answers as an
	// unknown lease.
	adminLease, _ := leaseOf(t, other, nil)
	require.Equal(t, []int64{otherLead}, adminLease.ids())
	r = stack.Call(t, http.MethodPost, "/v2/dialer/release/", map[string]any{"leaseId": *adminLease.LeaseID}, WithKey(client.key))
	assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	assert.Equal(t, "lease "+*adminLease.LeaseID+" does not exist", r.Env.Message)
	r = stack.Call(t, http.MethodPost, "/v2/dialer/extend/", map[string]any{"leaseId": *a.LeaseID, "leaseSeconds": 60}, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "2026-11-23T12:01:00+00:00", r.Data(t)["leaseExpiresAt"])
	r = stack.Call(t, http.MethodPost, "/v2/dialer/release/", map[string]any{"leaseId": *a.LeaseID}, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, fmt.Sprintf(`{"leaseId":%q,"leadIds":[%d]}`, *a.LeaseID, lead), string(r.Env.Data))

	r = stack.Call(t, http.MethodPost, "/v2/dnc/create/", map[string]any{"phones": []string{newPhone()}}, WithKey(client.key))
	assert.Equal(t, http.StatusForbidden, r.Status, "the every-order list is staff's")
	r = stack.Call(t, http.MethodPost, "/v2/dnc/create/", map[string]any{"phones": []string{newPhone()}, "orderId": other}, WithKey(client.key))
	assert.Equal(t, http.StatusBadRequest, r.Status)
	phone := newPhone()
	r = stack.Call(t, http.MethodPost, "/v2/dnc/create/", map[string]any{"phones": []string{phone}, "orderId": own}, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r = stack.Call(t, http.MethodPost, "/v2/dnc/create/", map[string]any{"phones": []string{newPhone()}, "orderId": other})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r = stack.Call(t, http.MethodGet, "/v2/dnc/", nil, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.EqualValues(t, 1, r.Data(t)["total"], "its own order's entry only")

	// The check reveals no more than the list: an every-order entry (staff's) is not the client's.
	staffOnly := newPhone()
	r = stack.Call(t, http.MethodPost, "/v2/dnc/create/", map[string]any{"phones": []string{staffOnly}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r = stack.Call(t, http.MethodGet, "/v2/dnc/?phone=%2B"+staffOnly, nil, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.EqualValues(t, 0, r.Data(t)["total"], "the list hides the every-order entry")
	r = stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/dnc/check/?phone=%%2B%s&orderId=%d", staffOnly, own), nil, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, false, r.Data(t)["doNotCall"], "so does the check")
	r = stack.Call(t, http.MethodGet, "/v2/dnc/check/?phone=%2B"+staffOnly, nil, WithKey(client.key))
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Contains(t, r.Errors(t)["orderId"], "is required")
	r = stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/dnc/check/?phone=%%2B%s&orderId=%d", phone, own), nil, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, true, r.Data(t)["doNotCall"], "its own order's entry")
	r = stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/dnc/check/?phone=%%2B%s&orderId=%d", staffOnly, own), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, true, r.Data(t)["doNotCall"], "staff see the every-order entry")
}

// The pace and the explanation of an order follow the orders like the lease: a client reads its
// own, another client's order answers 404 like a missing one. The order has no agents, so the
// paced lease hands out nothing and explain names the lead's reason (the user service is not asked).
func TestDialerPaceAndExplainFollowTheOrders(t *testing.T) {
	setClock := fixClock(t)
	setClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	client := newMember(t, "client@pace.e2e", "client")
	own, ownCode := dialingOrder(t, "Client's paced dialing", WithKey(client.key))
	other, _ := dialingOrder(t, "Someone else's paced dialing")
	createLead(t, "/v2/lead/create/", v2Lead(own, ownCode, newPhone()), WithKey(client.key))

	r := stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/dialer/pace/%d/", own), nil, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	pace := r.Data(t)
	assert.Equal(t, "progressive", pace["mode"], "the order's default pacing mode")
	assert.Equal(t, map[string]any{}, pace["agents"])
	assert.EqualValues(t, 0, pace["callsInFlight"])

	r = stack.Call(t, http.MethodGet, fmt.Sprintf("/v2/dialer/explain/%d/", own), nil, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var e struct {
		Due     int64 `json:"due"`
		Reasons []struct {
			Reason string `json:"reason"`
			Count  int64  `json:"count"`
		} `json:"reasons"`
	}
	require.NoError(t, json.Unmarshal(r.Env.Data, &e))
	counts := map[string]int64{}
	for _, x := range e.Reasons {
		counts[x.Reason] = x.Count
	}
	assert.Equal(t, int64(1), counts["noAgent"], "due but for an agent: %s", r.Body)

	r = stack.Call(t, http.MethodPost, "/v2/dialer/lease/", map[string]any{"orderId": own, "dialerId": "paced"}, WithKey(client.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, []any{}, r.Data(t)["list"], "no agent: nothing to dial")
	assert.EqualValues(t, 5000, r.Data(t)["retryAfterMs"], "no agent logged in: ask again in 5 s")

	for _, path := range []string{"/v2/dialer/pace/", "/v2/dialer/explain/"} {
		r = stack.Call(t, http.MethodGet, fmt.Sprintf("%s%d/", path, other), nil, WithKey(client.key))
		assert.Equal(t, http.StatusNotFound, r.Status, "another client's order: %s", r.Body)
		r = stack.Call(t, http.MethodGet, path+"999999999/", nil)
		assert.Equal(t, http.StatusNotFound, r.Status, "a missing order: %s", r.Body)
		r = stack.Call(t, http.MethodGet, path+"abc/", nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	}
}
