//go:build fault || cluster

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/gateway/e2e/stacktest"
	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mqtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PostgreSQL restart parameters: the outage lasts pgOutage, long enough for every client to meet
// it several times and for the health check to be asked while it lasts.
const (
	pgSyncCreates  = 600
	pgAsyncCreates = 900
	pgOutage       = 4 * time.Second
)

// TestPostgresRestart restarts a PostgreSQL cluster of the test's own (its own port and data
// folder; the machine's cluster is never touched) while sync and async lead creates, order updates
// and call events go on, and checks what the issue asks: sync creates answer 503 while it is down
// (never 500, never a 200 without a lead) and succeed after; every async create accepted, during
// the outage too, is created exactly once; the order outbox and call ingest resume; the health
// check answers 503 naming the services whose database is down; no process was restarted.
func TestPostgresRestart(t *testing.T) {
	pg := dbtest.StartCluster(t, dbtest.ClusterOptions{})
	amqpURL, dropVhost, err := mqtest.CreateVhost("e2e_pgfault")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dropVhost() })
	// A verified key stays cached for the whole test, so that requests during the outage reach
	// the services (the gateway's own refusal, auth unavailable, is a 503 already).
	s := startFaultStackWith(t, pg.URL(), amqpURL, map[string][]string{"gateway": {"AUTH_CACHE_TTL=10m"}})
	pids := map[string]int{}
	for _, p := range processes {
		pids[p.name] = s.PID(p.name)
	}

	restart := fault{inject: pg.Stop, heal: pg.Start}
	runPostgresScenario(t, s, pg, restart)
	runCallIngestScenario(t, s, "postgres restart", restart)
	// The relay's replication connection breaks with the server; it takes the slot again after
	// and goes on from what the broker confirmed.
	runEventScenario(t, s, "postgres restart events", 3, fault{inject: pg.Stop, heal: func() error {
		time.Sleep(pgOutage)
		return pg.Start()
	}})
	waitOutboxesDrained(t, s)

	for _, p := range processes {
		assert.Equal(t, pids[p.name], s.PID(p.name), "%s was not restarted", p.name)
	}
}

// runPostgresScenario runs sync creates (with an Idempotency-Key, retried with it after a 503)
// and async creates (without one: accepting them needs only the broker, so they go on being
// accepted while the database is down) through several clients, stops the database once a third
// of each are answered, checks the health check and an order update while it is down, starts it
// again, and accounts for both.
func runPostgresScenario(t *testing.T, s *Stack, pg *dbtest.Cluster, f fault) {
	orderR := s.Call(t, http.MethodPost, "/v2/order/create/", minimalOrder("Fault postgres"))
	require.Equal(t, http.StatusOK, orderR.Status, "%s", orderR.Body)
	orderID := int64(orderR.Data(t)["id"].(float64))
	code := s.Call(t, http.MethodGet, "/v2/order/detail/"+strconv.FormatInt(orderID, 10)+"/", nil).Data(t)["code"].(string)

	client := &http.Client{Timeout: 30 * time.Second, Transport: openapiCheck.transport(&http.Transport{MaxIdleConnsPerHost: faultClients * 2})}
	run := make([]byte, 4)
	_, _ = rand.Read(run)
	prefix := "fault-pg-" + hex.EncodeToString(run) + "-"
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 3*time.Minute)
	defer cancel()

	var down atomic.Bool // the database is stopped
	var (
		syncIDs             = make([]int64, pgSyncCreates)
		jobs                = make([]string, pgAsyncCreates)
		nextSync, nextAsync atomic.Int64
		doneSync, doneAsync atomic.Int64
		unavailable         atomic.Int64 // sync answers 503 while the database was down
		acceptedDown        atomic.Int64 // async creates accepted while it was down
		mu                  sync.Mutex
		other               = map[string]int{} // any other answer: status and message
	)
	injected := make(chan struct{})
	faultDone := make(chan error, 1)
	var faultOnce sync.Once
	trigger := func() {
		if doneSync.Load() < pgSyncCreates/faultAt || doneAsync.Load() < pgAsyncCreates/faultAt {
			return
		}
		faultOnce.Do(func() {
			go func() {
				// Order events written just before the outage: the relay may meet it mid-way.
				for i := range 3 {
					_ = s.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(orderID, 10)+"/", map[string]any{"title": "Fault postgres " + strconv.Itoa(i)})
				}
				err := f.inject()
				down.Store(true)
				close(injected)
				if err == nil {
					err = checksWhileDown(t, s, orderID)
					time.Sleep(pgOutage)
					down.Store(false)
					err = errors.Join(err, f.heal())
				}
				faultDone <- err
			}()
		})
	}
	// wait holds a client once its share of the stream before the fault is sent, so that the rest
	// meets the fault whatever the machine's speed.
	wait := func(done *atomic.Int64, total int) {
		if done.Load() >= int64(total/faultAt) {
			select {
			case <-injected:
			case <-ctx.Done():
			}
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2*faultClients)
	for range faultClients / 2 {
		wg.Go(func() {
			for {
				wait(&doneSync, pgSyncCreates)
				i := int(nextSync.Add(1)) - 1
				if i >= pgSyncCreates {
					return
				}
				raw, _ := json.Marshal(v2Lead(orderID, code, pgPhone(i)))
				key := prefix + "sync-" + strconv.Itoa(i)
				for {
					wasDown := down.Load()
					status, data, err := post(ctx, client, s, "/v2/lead/create/", raw, key)
					if ctx.Err() != nil {
						errs <- fmt.Errorf("sync create %d: never created", i)
						return
					}
					if err == nil && status == http.StatusOK {
						var d struct {
							ID int64 `json:"id"`
						}
						if err := json.Unmarshal(data, &d); err != nil || d.ID <= 0 {
							errs <- fmt.Errorf("sync create %d: 200 without an id: %s", i, data)
							return
						}
						syncIDs[i] = d.ID
						break
					}
					switch {
					case err != nil:
						errs <- fmt.Errorf("sync create %d: %w", i, err)
						return
					case status == http.StatusServiceUnavailable:
						if wasDown || down.Load() {
							unavailable.Add(1)
						}
					case status == http.StatusConflict && strings.Contains(string(data), "still being processed"):
						// An attempt cut by the outage left its key claimed; it is released as soon
						// as the database is back.
					default:
						mu.Lock()
						other[strconv.Itoa(status)+" "+string(data)]++
						mu.Unlock()
					}
					time.Sleep(100 * time.Millisecond)
				}
				doneSync.Add(1)
				trigger()
			}
		})
	}
	for range faultClients / 2 {
		wg.Go(func() {
			for {
				wait(&doneAsync, pgAsyncCreates)
				i := int(nextAsync.Add(1)) - 1
				if i >= pgAsyncCreates {
					return
				}
				path, body := "/v2/lead/create-async/", any(v2Lead(orderID, code, pgPhone(pgSyncCreates+i)))
				if i%2 == 1 {
					path, body = "/v1/lead/create-async/", v1Lead(orderID, code, pgPhone(pgSyncCreates+i))
				}
				raw, _ := json.Marshal(body)
				for {
					wasDown := down.Load()
					status, data, err := post(ctx, client, s, path, raw, "")
					if err == nil && status == http.StatusOK {
						var d struct {
							JobID string `json:"jobId"`
						}
						if err := json.Unmarshal(data, &d); err != nil || len(d.JobID) != 36 {
							errs <- fmt.Errorf("async create %d: accepted without a job id: %s", i, data)
							return
						}
						jobs[i] = d.JobID
						if wasDown && down.Load() {
							acceptedDown.Add(1)
						}
						break
					}
					if err != nil || status != http.StatusServiceUnavailable {
						errs <- fmt.Errorf("async create %d: status %d %s: %v", i, status, data, err)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				doneAsync.Add(1)
				trigger()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	select {
	case err := <-faultDone:
		require.NoError(t, err, "restart PostgreSQL")
	case <-time.After(time.Minute):
		t.Fatal("the PostgreSQL restart did not finish")
	}
	require.Empty(t, other, "sync creates got no answer but 200, 503 and a 409 for a key still claimed")
	assert.Positive(t, unavailable.Load(), "sync creates met the outage")
	assert.Positive(t, acceptedDown.Load(), "async creates were accepted while the database was down")
	t.Logf("postgres: %d sync answers 503 during the outage, %d async creates accepted during it", unavailable.Load(), acceptedDown.Load())
	fmt.Printf("postgres restart: sync answers during the outage: 503=%d 500=0 other=0\n", unavailable.Load())

	// Sync: every 200 named a lead that exists with its phone; one lead per phone.
	created, duplicated := syncCreated(t, s.DatabaseURL, orderID, syncIDs, pgPhone)
	line := fmt.Sprintf("postgres restart sync: accepted=%d created=%d lost=%d duplicated=%d", pgSyncCreates, created, pgSyncCreates-created, duplicated)
	fmt.Println(line)
	if created != pgSyncCreates || duplicated != 0 {
		t.Error(line)
	}

	created, all := waitLeads(t, s.DatabaseURL, jobs)
	line = fmt.Sprintf("postgres restart async: accepted=%d created=%d lost=%d duplicated=%d", len(jobs), created, len(jobs)-created, all-created)
	fmt.Println(line)
	if created != len(jobs) || all != created {
		t.Error(line)
	}
}

// checksWhileDown runs right after the database stopped: the health check answers 503 with the
// database-backed services failed, and an order update (a write of another service) is a 503.
func checksWhileDown(t *testing.T, s *Stack, orderID int64) error {
	var errs []error
	r := s.Call(t, http.MethodGet, "/v1/health/check/", nil)
	var m map[string]component
	if err := json.Unmarshal(r.Env.Data, &m); err != nil {
		return fmt.Errorf("health data: %w: %s", err, r.Body)
	}
	if r.Status != http.StatusServiceUnavailable {
		errs = append(errs, fmt.Errorf("health check with the database down: %d, want 503: %s", r.Status, r.Body))
	}
	for _, name := range []string{"serviceLead", "serviceOrder", "serviceUser", "serviceCall", "serviceNotification"} {
		if m[name].Success || !strings.Contains(r.Env.Message, name) {
			errs = append(errs, fmt.Errorf("health check with the database down: %s not failed: %s", name, r.Body))
		}
	}
	if !m["serviceMicroRabbit"].Success {
		errs = append(errs, fmt.Errorf("health check with the database down: the broker failed too: %s", r.Body))
	}
	resp, err := http.Get(s.URL("lead-api") + "/readyz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			errs = append(errs, fmt.Errorf("lead-api /readyz with the database down: %d, want 503", resp.StatusCode))
		}
	}
	u := s.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(orderID, 10)+"/", map[string]any{"title": "Fault postgres (down)"})
	if u.Status != http.StatusServiceUnavailable {
		errs = append(errs, fmt.Errorf("order update with the database down: %d, want 503: %s", u.Status, u.Body))
	}
	t.Logf("with the database down: health %d (%s), order update %d", r.Status, r.Env.Message, u.Status)
	return errors.Join(errs...)
}

// waitOutboxesDrained updates an order a few times once the database is back and waits until the
// order service's outbox relay has published every row, those written just before the outage
// (runPostgresScenario) too. (call-ingest's finished_published_at is no outbox: it is stamped after
// the confirm, and a stamp lost to the outage only means a copy of the event on a redelivery.)
func waitOutboxesDrained(t *testing.T, s *Stack) {
	orderID := createOrderOn(t, s, "Fault postgres outbox")
	for i := range 5 {
		r := s.Call(t, http.MethodPost, "/v2/order/update/"+strconv.FormatInt(orderID, 10)+"/", map[string]any{"title": "Fault postgres outbox " + strconv.Itoa(i)})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
	conn, err := db.Open(context.Background(), s.DatabaseURL, "public", 2)
	require.NoError(t, err)
	defer conn.Close()
	var total, pending int
	deadline := time.Now().Add(faultDrain)
	for {
		require.NoError(t, conn.QueryRow(`SELECT count(*), count(*) FILTER (WHERE published_at IS NULL) FROM orders.outbox`).Scan(&total, &pending))
		if pending == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	line := fmt.Sprintf("postgres restart outbox: order events=%d published=%d unpublished=%d", total, total-pending, pending)
	fmt.Println(line)
	require.GreaterOrEqual(t, total, 8, line)
	require.Zero(t, pending, line)
}

// createOrderOn creates a minimal order through s and returns its id.
func createOrderOn(t *testing.T, s *Stack, title string) int64 {
	t.Helper()
	r := s.Call(t, http.MethodPost, "/v2/order/create/", minimalOrder(title))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return int64(r.Data(t)["id"].(float64))
}

// pgPhone is a distinct valid number per create of the PostgreSQL scenario.
func pgPhone(i int) string { return fmt.Sprintf("7916%07d", 4000000+i) }

// startFaultStackWith is startFaultStack with extra variables for some processes.
func startFaultStackWith(t *testing.T, dbURL, amqpURL string, extra map[string][]string) *Stack {
	t.Helper()
	procs := make([]stacktest.Process, len(processes))
	for i, p := range processes {
		procs[i] = stacktest.Process{Name: p.name, Pkg: p.pkg, Health: p.health, Consumer: p.consumer,
			Env: append(append([]string{}, p.env...), extra[p.name]...)}
		if p.name == "lead-api" {
			procs[i].Env = append(procs[i].Env, "JOB_CONFIRM_TIMEOUT="+faultConfirm)
		}
	}
	st, err := stacktest.Start(stacktest.Config{
		DatabaseURL: dbURL, AMQPURL: amqpURL, InternalToken: internalToken,
		Processes: procs, Tools: tools, BinDir: stack.BinDir(),
	})
	if st != nil {
		t.Cleanup(func() {
			if t.Failed() {
				st.DumpLogs(os.Stderr)
			}
			st.Close()
		})
	}
	require.NoError(t, err)
	return newStack(st)
}
