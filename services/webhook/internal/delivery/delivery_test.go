package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/services/webhook/internal/delivery"
	"ccplatform/services/webhook/internal/servicetest"

	"github.com/jmoiron/sqlx"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "webhook_delivery", func(e *servicetest.Env) { env = e })
}

// received is one request a receiver got.
type received struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// receiver is a real HTTP endpoint answering with answer(n) to its n-th request (1-based).
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{At: env.Clock.Now(), Header: req.Header.Clone(), Body: body})
		n := len(r.got)
		r.mu.Unlock()
		w.WriteHeader(answer(n))
		fmt.Fprintf(w, "answer %d", n)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received{}, r.got...)
}

type created struct {
	ID     int64  `json:"id"`
	Secret string `json:"secret"`
}

func subscribe(t *testing.T, url string, events ...string) created {
	t.Helper()
	res := env.As("601", "client").Do(t, http.MethodPost, "/v2/webhook/create", map[string]any{"url": url, "events": events})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var c created
	require.NoError(t, json.Unmarshal(res.Data, &c))
	return c
}

var eventSeq int

// publish records an event for subs as the fan-out does, due at the clock's now.
func publish(t *testing.T, subs ...int64) string {
	t.Helper()
	eventSeq++
	id := "evt-" + t.Name() + "-" + strconv.Itoa(eventSeq)
	body := fmt.Appendf(nil, `{"id":%q,"type":"lead.created","createdAt":"2026-11-26T10:00:00+00:00","data":{"id":%d}}`, id, eventSeq)
	require.NoError(t, db.InTx(context.Background(), env.DB, func(tx *sqlx.Tx) error {
		return delivery.EnqueueAll(context.Background(), tx, []delivery.Queued{{ID: id, Type: "lead.created", Body: body, To: subs}}, env.Clock.Now())
	}))
	return id
}

func TestADeliveryIsSignedAsTheStandardWebhooksLibraryVerifies(t *testing.T) {
	r := newReceiver(t, func(int) int { return http.StatusNoContent })
	s := subscribe(t, r.URL+"/hook", "lead.created")
	d := env.Dispatcher(t, delivery.Config{}, nil)
	id := publish(t, s.ID)
	require.NoError(t, d.Settle(context.Background()))

	got := r.requests()
	require.Len(t, got, 1)
	wh, err := standardwebhooks.NewWebhook(s.Secret)
	require.NoError(t, err)
	// The test's clock is not the wall clock, so the library's 5-minute tolerance is left out and
	// the timestamp compared with the clock instead.
	assert.NoError(t, wh.VerifyIgnoringTimestamp(got[0].Body, got[0].Header))
	assert.Equal(t, id, got[0].Header.Get("Webhook-Id"))
	assert.Equal(t, strconv.FormatInt(env.Clock.Now().Unix(), 10), got[0].Header.Get("Webhook-Timestamp"))
	assert.Equal(t, "application/json", got[0].Header.Get("Content-Type"))
	var payload map[string]any
	require.NoError(t, json.Unmarshal(got[0].Body, &payload))
	assert.Equal(t, id, payload["id"])
	assert.Equal(t, "lead.created", payload["type"])

	// A tampered body fails verification: the signature covers it.
	assert.Error(t, wh.VerifyIgnoringTimestamp(append(got[0].Body, ' '), got[0].Header))

	// After a rotation both secrets verify the next delivery for 24 h; then only the new one signs.
	res := env.As("601", "client").Do(t, http.MethodPost, "/v2/webhook/rotate-secret/"+strconv.FormatInt(s.ID, 10), nil)
	require.Equal(t, http.StatusOK, res.Status)
	var rotated created
	require.NoError(t, json.Unmarshal(res.Data, &rotated))
	publish(t, s.ID)
	require.NoError(t, d.Settle(context.Background()))
	got = r.requests()
	require.Len(t, got, 2)
	newWH, err := standardwebhooks.NewWebhook(rotated.Secret)
	require.NoError(t, err)
	assert.NoError(t, wh.VerifyIgnoringTimestamp(got[1].Body, got[1].Header), "the old secret still signs")
	assert.NoError(t, newWH.VerifyIgnoringTimestamp(got[1].Body, got[1].Header), "the new secret signs")

	env.Clock.Add(24*time.Hour + time.Second)
	publish(t, s.ID)
	require.NoError(t, d.Settle(context.Background()))
	got = r.requests()
	require.Len(t, got, 3)
	assert.Error(t, wh.VerifyIgnoringTimestamp(got[2].Body, got[2].Header), "the old secret's overlap is over")
	assert.NoError(t, newWH.VerifyIgnoringTimestamp(got[2].Body, got[2].Header))
}

type logPage struct {
	List []struct {
		EventID       string  `json:"eventId"`
		State         string  `json:"state"`
		Attempts      int     `json:"attempts"`
		NextAttemptAt *string `json:"nextAttemptAt"`
		AttemptLog    []struct {
			At           string  `json:"at"`
			StatusCode   *int    `json:"statusCode"`
			ResponseBody *string `json:"responseBody"`
		} `json:"attemptLog"`
	} `json:"list"`
	Total int `json:"total"`
}

func deliveries(t *testing.T, sub int64, query string) logPage {
	t.Helper()
	res := env.As("601", "client").Do(t, http.MethodGet, "/v2/webhook/"+strconv.FormatInt(sub, 10)+"/deliveries"+query, nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var p logPage
	require.NoError(t, json.Unmarshal(res.Data, &p))
	return p
}

// An endpoint that answers 500 five times then 200 gets the event on the 6th attempt, each retry
// at the documented pause after the one before (jitter held at zero), and never earlier.
func TestFiveFailuresThenSuccessFollowTheSchedule(t *testing.T) {
	r := newReceiver(t, func(n int) int {
		if n <= 5 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	s := subscribe(t, r.URL, "lead.created")
	d := env.Dispatcher(t, delivery.Config{}, nil)
	ctx := context.Background()
	t0 := env.Clock.Now()
	publish(t, s.ID)
	require.NoError(t, d.Settle(ctx))
	want := []time.Time{t0}
	at := t0
	for n := 1; n <= 5; n++ {
		require.Len(t, r.requests(), n)
		pause := delivery.Schedule[n-1]
		env.Clock.Set(at.Add(pause - time.Second))
		require.NoError(t, d.Settle(ctx))
		require.Len(t, r.requests(), n, "attempt %d is not made before its time", n+1)
		at = at.Add(pause)
		env.Clock.Set(at)
		require.NoError(t, d.Settle(ctx))
		want = append(want, at)
	}
	got := r.requests()
	require.Len(t, got, 6)
	for i, g := range got {
		assert.Equal(t, want[i], g.At, "attempt %d", i+1)
	}
	assert.Equal(t, t0.Add(5*time.Second+30*time.Second+2*time.Minute+10*time.Minute+30*time.Minute), got[5].At)

	p := deliveries(t, s.ID, "")
	require.Len(t, p.List, 1)
	assert.Equal(t, "delivered", p.List[0].State)
	assert.Equal(t, 6, p.List[0].Attempts)
	assert.Nil(t, p.List[0].NextAttemptAt)
	require.Len(t, p.List[0].AttemptLog, 6)
	for i, a := range p.List[0].AttemptLog {
		status := http.StatusInternalServerError
		if i == 5 {
			status = http.StatusOK
		}
		assert.Equal(t, status, *a.StatusCode)
		assert.Equal(t, fmt.Sprintf("answer %d", i+1), *a.ResponseBody)
	}
	env.Clock.Add(48 * time.Hour) // leave the clock past every schedule for the next test
}

// The retries end within a day: the delivery is failed. An endpoint that failed everything for 3
// days is disabled and its owner gets a notification (queued in the outbox with the change).
func TestRetriesEndAfterADayAndThreeDaysOfFailureDisableTheEndpoint(t *testing.T) {
	r := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	s := subscribe(t, r.URL, "lead.created")
	d := env.Dispatcher(t, delivery.Config{}, nil)
	ctx := context.Background()
	t0 := env.Clock.Now()
	publish(t, s.ID)
	require.NoError(t, d.Settle(ctx))
	for _, pause := range delivery.Schedule {
		env.Clock.Add(pause)
		require.NoError(t, d.Settle(ctx))
	}
	assert.Len(t, r.requests(), len(delivery.Schedule)+1)
	p := deliveries(t, s.ID, "?state=failed")
	require.Len(t, p.List, 1)
	assert.Equal(t, len(delivery.Schedule)+1, p.List[0].Attempts)
	assert.Less(t, env.Clock.Now().Sub(t0), delivery.RetryWindow)

	var enabled bool
	require.NoError(t, env.DB.Get(&enabled, `SELECT enabled FROM subscriptions WHERE id = $1`, s.ID))
	assert.True(t, enabled, "a day of failure is not enough to disable")

	env.Clock.Set(t0.Add(delivery.DisableAfter))
	publish(t, s.ID)
	require.NoError(t, d.Settle(ctx))
	var reason *string
	require.NoError(t, env.DB.QueryRow(`SELECT enabled, disabled_reason FROM subscriptions WHERE id = $1`, s.ID).Scan(&enabled, &reason))
	assert.False(t, enabled)
	require.NotNil(t, reason)
	assert.Contains(t, *reason, "72h")
	var cmd struct {
		Target struct {
			UserID int64 `json:"userId"`
		} `json:"target"`
		Title string `json:"title"`
	}
	var body []byte
	require.NoError(t, env.DB.Get(&body, `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY id DESC LIMIT 1`, delivery.NotificationQueue))
	require.NoError(t, json.Unmarshal(body, &cmd))
	assert.Equal(t, int64(601), cmd.Target.UserID)
	assert.Contains(t, cmd.Title, strconv.FormatInt(s.ID, 10))

	// Disabled, it gets nothing more; the pending delivery waits until it is enabled again.
	publish(t, s.ID)
	n := len(r.requests())
	require.NoError(t, d.Settle(ctx))
	assert.Len(t, r.requests(), n)

	// Redelivery makes a failed event due again at once.
	res := env.As("601", "client").Do(t, http.MethodPost, "/v2/webhook/update/"+strconv.FormatInt(s.ID, 10), map[string]any{"enabled": true})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	failed := p.List[0].EventID
	res = env.As("601", "client").Do(t, http.MethodPost, "/v2/webhook/"+strconv.FormatInt(s.ID, 10)+"/redeliver/"+failed, nil)
	assert.Equal(t, http.StatusAccepted, res.Status, res.Message)
	require.NoError(t, d.Settle(ctx))
	var ids []string
	for _, g := range r.requests()[n:] {
		ids = append(ids, g.Header.Get("Webhook-Id"))
	}
	assert.Contains(t, ids, failed)
	assert.Equal(t, http.StatusNotFound, env.As("601", "client").Do(t, http.MethodPost,
		"/v2/webhook/"+strconv.FormatInt(s.ID, 10)+"/redeliver/no-such-event", nil).Status)
	env.Clock.Add(48 * time.Hour)
}

// 1,000 events to 10 endpoints, 2 of which never answer: the 8 others get all theirs while the
// hanging ones hold no more than their own share of the workers.
func TestHangingEndpointsDoNotHoldUpTheOthers(t *testing.T) {
	const events, healthy, hanging, perEndpoint = 1000, 8, 2, 4
	release := make(chan struct{})
	defer close(release)
	var subs []int64
	var oks []*receiver
	var mu sync.Mutex
	// An attempt the dispatcher gave up on (after delivery.AttemptTimeout) can look alive here a
	// moment longer: on a loaded machine the server notices the closed connection late, while the
	// freed slot already sent the next attempt. So an attempt counts as in flight until its
	// connection is seen closed or until AttemptTimeout less a second from its arrival, whichever
	// comes first: the bound is on what the dispatcher holds open.
	type attempt struct {
		at    time.Time
		ended bool
	}
	attempts, peak := map[int][]*attempt{}, map[int]int{}
	for i := range hanging {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			a := &attempt{at: time.Now()}
			mu.Lock()
			n := 1
			for _, o := range attempts[i] {
				if !o.ended && a.at.Sub(o.at) < delivery.AttemptTimeout-time.Second {
					n++
				}
			}
			attempts[i] = append(attempts[i], a)
			peak[i] = max(peak[i], n)
			mu.Unlock()
			select {
			case <-release:
			case <-req.Context().Done():
			}
			mu.Lock()
			a.ended = true
			mu.Unlock()
		}))
		t.Cleanup(srv.Close)
		subs = append(subs, subscribe(t, srv.URL, "lead.created").ID)
	}
	for range healthy {
		r := newReceiver(t, func(int) int { return http.StatusOK })
		oks = append(oks, r)
		subs = append(subs, subscribe(t, r.URL, "lead.created").ID)
	}
	for range events {
		publish(t, subs...)
	}
	d := env.Dispatcher(t, delivery.Config{Workers: 32, PerEndpoint: perEndpoint, Poll: 20 * time.Millisecond}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	start := time.Now()
	deadline := time.After(2 * time.Minute)
	for {
		total := 0
		for _, r := range oks {
			total += len(r.requests())
		}
		if total >= events*healthy {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("the healthy endpoints got %d of %d events", total, events*healthy)
		case <-time.After(50 * time.Millisecond):
		}
	}
	took := time.Since(start)
	cancel()
	<-done
	for _, r := range oks {
		seen := map[string]bool{}
		for _, g := range r.requests() {
			seen[g.Header.Get("Webhook-Id")] = true
		}
		assert.Len(t, seen, events, "every event, to every healthy endpoint")
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range hanging {
		assert.LessOrEqual(t, peak[i], perEndpoint, "a hanging endpoint holds at most its share")
	}
	t.Logf("8,000 deliveries beside 2 hanging endpoints in %s", took)
}

// The log keeps what is pending whatever its age; delivered and failed deliveries older than the
// retention go, with their attempts, and the events no delivery refers to any more.
func TestPurgeKeepsPendingDeliveriesAndRecentOnes(t *testing.T) {
	r := newReceiver(t, func(int) int { return http.StatusOK })
	s := subscribe(t, r.URL, "lead.created")
	d := env.Dispatcher(t, delivery.Config{}, nil)
	ctx := context.Background()
	old := publish(t, s.ID)
	require.NoError(t, d.Settle(ctx)) // delivered
	oldPending := publish(t, s.ID)    // never sent: the clock does not move for it below
	_, err := env.DB.Exec(`UPDATE deliveries SET next_attempt_at = $2 WHERE event_id = $1`, oldPending, env.Clock.Now().Add(30*24*time.Hour))
	require.NoError(t, err)
	env.Clock.Add(10 * 24 * time.Hour)
	recent := publish(t, s.ID)
	require.NoError(t, d.Settle(ctx))

	n, err := delivery.NewStore(env.DB).Purge(ctx, env.Clock.Now().Add(-7*24*time.Hour))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, int64(1), "the other tests' old deliveries go too")
	var left []string
	require.NoError(t, env.DB.Select(&left, `SELECT event_id FROM deliveries WHERE subscription_id = $1 ORDER BY id`, s.ID))
	assert.Equal(t, []string{oldPending, recent}, left)
	var events int
	require.NoError(t, env.DB.Get(&events, `SELECT count(*) FROM events WHERE id = $1`, old))
	assert.Zero(t, events, "the purged delivery's event")
	var attempts int
	require.NoError(t, env.DB.Get(&attempts, `SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1`, old))
	assert.Zero(t, attempts)
	env.Clock.Add(48 * time.Hour)
}
