//go:build fault || cluster

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/db"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Parameters of the kill scenarios: smaller streams than the broker's (a kill takes effect at
// once), still long enough that the kill lands mid-stream.
const (
	killCreates       = 900
	killNotifications = 120
	killRecipients    = 12
)

// TestProcessKills kills processes of the shared e2e stack with SIGKILL mid-stream (lead-api under
// async creates, the gateway under sync creates, notification-worker under notifications,
// lead-worker mid-import, lead-api mid-upload, webhook-dispatcher under sync creates, the holder of
// the lead events' slot under sync creates) and drops a consumer's broker connection, each with
// its accounting line.
func TestProcessKills(t *testing.T) {
	t.Run("lead-api SIGKILL", testLeadAPIKill)
	t.Run("gateway SIGKILL", testGatewayKill)
	t.Run("notification-worker SIGKILL", testNotificationWorkerKill)
	t.Run("consumer partition", testConsumerPartition)
	t.Run("import lead-worker SIGKILL", testImportWorkerKill)
	t.Run("import lead-api SIGKILL", testImportAPIKill)
	t.Run("webhook-dispatcher SIGKILL", testWebhookDispatcherKill)
	t.Run("relay SIGKILL", testRelayKill)
}

// killAndStart is the fault of a SIGKILL: the process is gone when inject returns, and heal
// starts it again (and waits until it is ready) while the clients go on.
func killAndStart(name string) fault {
	return fault{
		inject: func() error { stack.Stop(name, syscall.SIGKILL); return nil },
		heal:   func() error { return stack.Start(name) },
	}
}

// testLeadAPIKill: async creates, each sent once with its Idempotency-Key; a 503 (lead-api down:
// the gateway could not connect, so nothing reached it) is sent again with the same key, any other
// failure (the request cut by the kill) is left failed. Every 200 must have its job made into
// exactly one lead, and no phone (one per request) may have two leads, a cut request's included.
func testLeadAPIKill(t *testing.T) {
	orderID, code := leadOrder(t, "Fault lead-api SIGKILL")
	f := killAndStart("lead-api")
	client := faultClient()
	prefix := runPrefix("fault-lead-api")
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 2*time.Minute)
	defer cancel()

	jobs := make([]string, killCreates)
	var cut, retried atomic.Int64
	s := midStream{total: killCreates, fault: f}
	err := s.run(ctx, func(i int) error {
		path, body := "/v2/lead/create-async/", any(v2Lead(orderID, code, killPhone(1, i)))
		if i%2 == 1 {
			path, body = "/v1/lead/create-async/", v1Lead(orderID, code, killPhone(1, i))
		}
		raw, _ := json.Marshal(body)
		for {
			status, data, err := post(ctx, client, stack, path, raw, prefix+strconv.Itoa(i))
			switch {
			case err == nil && status == http.StatusOK:
				var d struct {
					JobID string `json:"jobId"`
				}
				if err := json.Unmarshal(data, &d); err != nil || len(d.JobID) != 36 {
					return fmt.Errorf("accepted without a job id: %s", data)
				}
				jobs[i] = d.JobID
				return nil
			case err == nil && status == http.StatusServiceUnavailable:
				retried.Add(1)
				time.Sleep(50 * time.Millisecond)
			case err == nil && (status == http.StatusBadGateway || status == http.StatusGatewayTimeout ||
				status == http.StatusConflict && strings.Contains(string(data), "still being processed")):
				// Cut by the kill. A 409 "still being processed" is one too: the gateway's transport
				// replays a POST with an Idempotency-Key on a fresh connection when the first one broke
				// (net/http treats the header as making it idempotent), so the 503 of that replay
				// (lead-api down) may follow an attempt that did reach lead-api and claim the key.
				cut.Add(1)
				return nil
			default:
				return fmt.Errorf("status %d: %s (%v)", status, data, err)
			}
		}
	})
	require.NoError(t, err)
	var accepted []string
	for _, id := range jobs {
		if id != "" {
			accepted = append(accepted, id)
		}
	}
	t.Logf("lead-api SIGKILL: %d accepted, %d cut by the kill, %d answers 503 sent again", len(accepted), cut.Load(), retried.Load())
	created, rows := waitLeads(t, stack.DatabaseURL, accepted)
	twice := phonesWithTwoLeads(t, orderID, 1, killCreates)
	line := fmt.Sprintf("lead-api SIGKILL: accepted=%d created=%d lost=%d duplicated=%d", len(accepted), created, len(accepted)-created, rows-created+twice)
	fmt.Println(line)
	if created != len(accepted) || rows != created || twice != 0 {
		t.Fatal(line)
	}
}

// testGatewayKill: sync creates through the gateway, each retried with its Idempotency-Key after any
// failure (the connection cut, or refused while the gateway is down) until answered. Every request
// then has exactly one lead; sent once more with the same key, each gets the original answer,
// marked replayed.
func testGatewayKill(t *testing.T) {
	orderID, code := leadOrder(t, "Fault gateway SIGKILL")
	client := faultClient()
	prefix := runPrefix("fault-gateway")
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 2*time.Minute)
	defer cancel()

	ids := make([]int64, killCreates)
	bodies := make([][]byte, killCreates)
	var failures atomic.Int64
	s := midStream{total: killCreates, fault: killAndStart("gateway")}
	err := s.run(ctx, func(i int) error {
		bodies[i], _ = json.Marshal(v2Lead(orderID, code, killPhone(2, i)))
		id, n, err := createRetrying(ctx, client, stack, bodies[i], prefix+strconv.Itoa(i))
		ids[i] = id
		failures.Add(int64(n))
		return err
	})
	require.NoError(t, err)
	t.Logf("gateway SIGKILL: %d attempts failed and were retried with their key", failures.Load())

	replayed := 0
	for i := range ids {
		status, data, err := post(ctx, client, stack, "/v2/lead/create/", bodies[i], prefix+strconv.Itoa(i))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
		var d struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, json.Unmarshal(data, &d))
		if d.ID == ids[i] {
			replayed++
		}
	}
	leads := leadsByPhone(t, orderID, 2, killCreates)
	created, duplicated := 0, 0
	for i, id := range ids {
		got := leads["+"+killPhone(2, i)]
		if len(got) >= 1 && got[0] == id {
			created++
		}
		duplicated += max(len(got)-1, 0)
	}
	line := fmt.Sprintf("gateway SIGKILL: accepted=%d created=%d lost=%d duplicated=%d", len(ids), created, len(ids)-created, duplicated)
	fmt.Println(line)
	fmt.Printf("gateway SIGKILL: retried with the same key: original answer %d of %d\n", replayed, len(ids))
	if created != len(ids) || duplicated != 0 || replayed != len(ids) {
		t.Fatal(line)
	}
}

// testNotificationWorkerKill: private notifications to users with e-mail and messenger on, through
// the gateway (503 retried with the key); notification-worker is killed and started again. Every
// accepted notification must be stored once and reach both channels: at least once, the duplicates
// told apart by a delivery key (the e-mail's Message-ID, which names the delivery; the messenger's
// text, which names the notification here). The kill lands between a send and its "sent" stamp at
// most for the few deliveries in flight; those are sent again when their lease ends.
func testNotificationWorkerKill(t *testing.T) {
	run := runPrefix("fault-nw")
	type user struct {
		id            int64
		address, chat string
	}
	users := make([]user, killRecipients)
	for i := range users {
		u := user{address: uniqueEmail(fmt.Sprintf("fault.nw%d", i)), chat: run + "chat" + strconv.Itoa(i)}
		u.id = createUser(t, u.address, "--access-group", "call-center", "--email-notifications=true", "--email-priority=none",
			"--messenger-notifications=true", "--messenger-priority=none", "--messenger-chat-id", u.chat)
		users[i] = u
	}
	title := func(i int) string { return run + " notification " + strconv.Itoa(i) }
	client := faultClient()
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 2*time.Minute)
	defer cancel()
	s := midStream{total: killNotifications, fault: killAndStart("notification-worker")}
	err := s.run(ctx, func(i int) error {
		raw, _ := json.Marshal(private(users[i%killRecipients].id, title(i), "default"))
		for {
			status, data, err := post(ctx, client, stack, "/v2/notification/private/", raw, run+strconv.Itoa(i))
			switch {
			case err == nil && status == http.StatusOK:
				return nil
			case err == nil && status == http.StatusServiceUnavailable:
				time.Sleep(50 * time.Millisecond)
			default:
				return fmt.Errorf("status %d: %s (%v)", status, data, err)
			}
		}
	})
	require.NoError(t, err)

	conn := notificationsDB(t)
	var stored, records int
	mails, chats := map[string]int{}, map[string]int{} // delivery key → times received
	var mailed, messaged int
	deadline := time.Now().Add(faultDrain)
	for {
		require.NoError(t, conn.QueryRow(`SELECT count(DISTINCT title), count(*) FROM notifications.notifications WHERE title LIKE $1`,
			run+" notification %").Scan(&stored, &records))
		clear(mails)
		clear(chats)
		mailed, messaged = 0, 0
		for _, u := range users {
			for _, m := range peers.mail.To(u.address) {
				if strings.HasPrefix(m.Subject, run) {
					mails[m.Header.Get("Message-Id")+" "+m.Subject]++
					mailed++
				}
			}
			for _, m := range peers.bot.To(u.chat) {
				if strings.HasPrefix(m.Text, run) {
					chats[u.chat+" "+strings.SplitN(m.Text, "\n", 2)[0]]++
					messaged++
				}
			}
		}
		if (stored == killNotifications && len(mails) == killNotifications && len(chats) == killNotifications) || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	keys := map[string]bool{}
	for k := range mails {
		keys[strings.SplitN(k, " ", 2)[0]] = true
	}
	line := fmt.Sprintf("notification-worker SIGKILL: accepted=%d created=%d lost=%d duplicated=%d", killNotifications, stored, killNotifications-stored, records-stored)
	fmt.Println(line)
	delivered := fmt.Sprintf("notification-worker SIGKILL deliveries: email=%d/%d (received %d, repeats removed by Message-ID %d) messenger=%d/%d (received %d, repeats %d)",
		len(mails), killNotifications, mailed, mailed-len(mails), len(chats), killNotifications, messaged, messaged-len(chats))
	fmt.Println(delivered)
	assert.Len(t, keys, len(mails), "each e-mail has a Message-ID of its own: a repeat carries the same one")
	if stored != killNotifications || records != stored || len(mails) != killNotifications || len(chats) != killNotifications {
		t.Fatal(line + "; " + delivered)
	}
}

// testConsumerPartition drops lead-worker's broker connection (rabbitmqctl close_connection, as a
// network partition would end it) while async creates are in flight: its unacked deliveries go back
// to the queue and are delivered again, to the reconnected worker, and each job makes exactly one
// lead. The health check shows lead.jobs' consumers drop and come back.
func testConsumerPartition(t *testing.T) {
	var sawDrop atomic.Bool
	var closes int
	f := fault{
		inject: func() error {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go watchConsumers(ctx, t, "lead.jobs", &sawDrop)
			// The worker reconnects within moments; close again should the watcher have missed the
			// gap (it asks the health check without pause).
			for closes = 1; closes <= 5; closes++ {
				if err := closeConsumerConnection(stack.AMQPURL, "lead-worker"); err != nil {
					return err
				}
				deadline := time.Now().Add(3 * time.Second)
				for !sawDrop.Load() && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if sawDrop.Load() {
					return nil
				}
			}
			return nil
		},
		heal: func() error {
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if current, needed, status, err := queueConsumers(t, "lead.jobs"); err == nil && status == http.StatusOK && current >= needed {
					return nil
				}
				time.Sleep(50 * time.Millisecond)
			}
			return fmt.Errorf("lead.jobs' consumers did not come back within 30 s")
		},
	}
	runFaultScenario(t, stack, "consumer partition", f)
	fmt.Printf("consumer partition: connection closed %d time(s); health check showed the drop: %v, and the recovery: true\n", closes, sawDrop.Load())
	assert.True(t, sawDrop.Load(), "the health check showed lead.jobs below its needed consumers")
}

// watchConsumers asks the health check without pause until ctx ends and records whether it
// showed queue below the consumers it needs (with a 503).
func watchConsumers(ctx context.Context, t *testing.T, queue string, drop *atomic.Bool) {
	for ctx.Err() == nil {
		current, needed, status, err := queueConsumers(t, queue)
		if err == nil && current < needed && status == http.StatusServiceUnavailable {
			drop.Store(true)
			t.Logf("health check: %s has %d consumers of %d needed, status %d", queue, current, needed, status)
			return
		}
	}
}

// queueConsumers is what the health check says of queue: current and needed consumers, and its
// status.
func queueConsumers(t *testing.T, queue string) (current, needed, status int, err error) {
	req, err := http.NewRequest(http.MethodGet, stack.BaseURL+"/v1/health/check/", nil)
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header.Set("X-Api-Key", stack.APIKey)
	resp, err := stack.ClientFor(t).Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	var env struct {
		Data map[string]component `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return 0, 0, resp.StatusCode, err
	}
	for _, q := range env.Data["serviceMicroMqHub"].Data.Consumers {
		if q.QueueName == queue {
			return q.Data.Current, q.Data.Needle, resp.StatusCode, nil
		}
	}
	return 0, 0, resp.StatusCode, fmt.Errorf("queue %s not in the health check", queue)
}

// closeConsumerConnection closes, with rabbitmqctl, every connection of the vhost of amqpURL that
// the client named name (its connection_name).
func closeConsumerConnection(amqpURL, name string) error {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return err
	}
	vhost := strings.TrimPrefix(u.Path, "/")
	if vhost == "" {
		vhost = "/"
	}
	out, err := exec.Command("rabbitmqctl", "list_connections", "-q", "--no-table-headers", "pid", "vhost", "client_properties").CombinedOutput()
	if err != nil {
		return fmt.Errorf("rabbitmqctl list_connections: %w\n%s", err, out)
	}
	closed := 0
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 3 || f[1] != vhost || !strings.Contains(f[2], `{"connection_name","`+name+`"}`) {
			continue
		}
		if out, err := exec.Command("rabbitmqctl", "close_connection", f[0], "fault test: partition of "+name).CombinedOutput(); err != nil {
			return fmt.Errorf("rabbitmqctl close_connection: %w\n%s", err, out)
		}
		closed++
	}
	if closed == 0 {
		return fmt.Errorf("no connection named %s in vhost %s", name, vhost)
	}
	return nil
}

// midStream runs total requests through faultClients clients (send(i) for each i), injects fault
// once a third of them succeeded (holding the clients until it is in effect, so the rest meet it
// whatever the machine's speed) and heals it while the clients go on.
type midStream struct {
	total int
	fault fault
}

func (m midStream) run(ctx context.Context, send func(i int) error) error {
	var next, done atomic.Int64
	injected := make(chan struct{})
	faultDone := make(chan error, 1)
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, faultClients)
	for range faultClients {
		wg.Go(func() {
			for {
				if done.Load() >= int64(m.total/faultAt) {
					select {
					case <-injected:
					case <-ctx.Done():
						return
					}
				}
				i := int(next.Add(1)) - 1
				if i >= m.total {
					return
				}
				if err := send(i); err != nil {
					errs <- fmt.Errorf("request %d: %w", i, err)
					return
				}
				if done.Add(1) == int64(m.total/faultAt) {
					once.Do(func() {
						go func() {
							err := m.fault.inject()
							close(injected)
							if err == nil {
								err = m.fault.heal()
							}
							faultDone <- err
						}()
					})
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	select {
	case err := <-faultDone:
		if err != nil {
			return fmt.Errorf("fault: %w", err)
		}
	case <-time.After(faultHeal):
		return fmt.Errorf("the fault did not finish")
	}
	return nil
}

// faultClient is the public API's checked transport over a pool sized for the clients.
func faultClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: openapiCheck.transport(&http.Transport{MaxIdleConnsPerHost: faultClients * 2})}
}

// runPrefix is a prefix unique to this run, for idempotency keys and titles.
func runPrefix(label string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return label + "-" + hex.EncodeToString(b) + "-"
}

// killPhone is a distinct valid number per kill scenario (1, 2, ...) and request.
func killPhone(scenario, i int) string { return fmt.Sprintf("7915%07d", scenario*1000000+i) }

// leadsByPhone maps the phones of scenario's requests to the ids of their leads in order, oldest
// first.
func leadsByPhone(t *testing.T, orderID int64, scenario, n int) map[string][]int64 {
	t.Helper()
	conn, err := db.Open(context.Background(), stack.DatabaseURL, "leads", 2)
	require.NoError(t, err)
	defer conn.Close()
	phones := make([]string, n)
	for i := range phones {
		phones[i] = "+" + killPhone(scenario, i)
	}
	var rows []struct {
		ID    int64  `db:"id"`
		Phone string `db:"phone"`
	}
	require.NoError(t, conn.Select(&rows, `SELECT id, phone FROM leads WHERE order_id = $1 AND phone = ANY($2) ORDER BY id`, orderID, pq.StringArray(phones)))
	out := map[string][]int64{}
	for _, r := range rows {
		out[r.Phone] = append(out[r.Phone], r.ID)
	}
	return out
}

// phonesWithTwoLeads counts the leads beyond the first of each phone of scenario's requests.
func phonesWithTwoLeads(t *testing.T, orderID int64, scenario, n int) int {
	extra := 0
	for _, ids := range leadsByPhone(t, orderID, scenario, n) {
		extra += len(ids) - 1
	}
	return extra
}
