//go:build fault || cluster

// The fault test is built only with the "fault" tag: scripts/fault-test.sh (called by make test)
// runs it on its own, verbosely, so that its summary lines show in the log and it does not run a
// second time inside the ordinary e2e run. The "cluster" tag builds it too, for the scenarios'
// helpers that fault_cluster_test.go uses; scripts/cluster-test.sh runs only the cluster's test.

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/freeport"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// Fault test parameters: enough jobs and clients that the fault lands mid-stream, few enough that
// both scenarios stay well under three minutes on two cores.
const (
	faultJobs    = 2000
	faultClients = 8
	// faultAt is the share of jobs accepted before the fault is injected.
	faultAt = 3
	// faultDrain bounds the wait for every accepted job to be done after the last accept.
	faultDrain = 90 * time.Second
	// faultConfirm is lead-api's confirm timeout in the fault stack: a request during the outage
	// is answered 503 after it (and retried), instead of after the default 10 s.
	faultConfirm = "2s"
	// faultHeal bounds the wait, after the last request, for the fault's heal to finish (a
	// rolling restart of a three-node broker cluster takes about a minute on two cores).
	faultHeal = 3 * time.Minute
)

// TestAsyncLeadsSurviveFaults sends async lead creates (v1 and v2 mixed, several clients) while
// (a) the broker is restarted and (b) lead-worker is killed with SIGKILL and started again, and
// checks that every accepted job made exactly one lead: 0 lost, 0 duplicated. A request answered
// 503 was not accepted; its client retries it with the same Idempotency-Key.
func TestAsyncLeadsSurviveFaults(t *testing.T) {
	t.Run("broker restart", func(t *testing.T) {
		node := startBrokerNode(t)
		dbURL, drop, err := dbtest.Create("e2e_fault")
		require.NoError(t, err)
		t.Cleanup(func() { _ = drop() })
		s := startFaultStack(t, dbURL, node.URL())
		runFaultScenario(t, s, "broker restart", fault{inject: node.Stop, heal: node.Start})
		runCallIngestScenario(t, s, "broker restart", fault{inject: node.Stop, heal: node.Start})
		// Sync creates go on while the broker is down: their events wait in the WAL, which the slot
		// holds back, and leave once it is back.
		runEventScenario(t, s, "broker restart events", 2, fault{inject: node.Stop, heal: func() error {
			time.Sleep(2 * time.Second)
			return node.Start()
		}})
		healthWithTheBrokerStopped(t, s, node)
	})
	t.Run("worker SIGKILL", func(t *testing.T) {
		runFaultScenario(t, stack, "lead-worker SIGKILL", fault{
			inject: func() error { stack.Stop("lead-worker", syscall.SIGKILL); return nil },
			heal: func() error {
				time.Sleep(time.Second)
				return stack.Start("lead-worker")
			},
		})
	})
}

// faultCalls is how many telephony call events the call-ingest scenario publishes.
const faultCalls = 600

// runCallIngestScenario publishes faultCalls call events, as the telephony platform does, with
// confirms, through faultClients publishers; once a third are confirmed it injects f (the broker
// restart) while the publishers go on, then checks that call-ingest stored every confirmed event
// exactly once. label names the fault in its accounting line.
func runCallIngestScenario(t *testing.T, s *Stack, label string, f fault) {
	conn := mq.Dial(s.AMQPURL, "fault-telephony-platform", zap.NewNop(), mq.WorkQueue(telephony.Queue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	platformIDs := make([]string, faultCalls)
	var confirmed atomic.Int64
	faultDone := make(chan error, 1)
	var wg sync.WaitGroup
	errs := make(chan error, faultClients)
	for c := range faultClients {
		wg.Go(func() {
			for i := c; i < faultCalls; i += faultClients {
				ev := platformCall(int64(i+1), 1, 1, telephony.StatusAnswered, telephony.DirectionOutgoing,
					time.Now().Add(-time.Hour), 30*time.Second)
				body, err := json.Marshal(ev)
				if err == nil {
					err = pub.Publish(ctx, "", telephony.Queue, mq.Message{ID: ev.EventID, Type: telephony.EventType, Body: body})
				}
				if err != nil {
					errs <- fmt.Errorf("call event %d: %w", i, err)
					return
				}
				platformIDs[i] = ev.PlatformCallID
				if confirmed.Add(1) == faultCalls/faultAt {
					go func() {
						err := f.inject()
						if err == nil {
							err = f.heal()
						}
						faultDone <- err
					}()
				}
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
		require.NoError(t, err, "inject the fault: "+label)
	case <-time.After(faultHeal):
		t.Fatal("the fault did not finish: " + label)
	}

	stored, rows := waitCalls(t, s.DatabaseURL, platformIDs, faultCalls)
	line := fmt.Sprintf("%s calls: published=%d stored=%d lost=%d duplicated=%d", label, faultCalls, stored, faultCalls-stored, rows-stored)
	fmt.Println(line)
	if stored != faultCalls || rows != stored {
		t.Fatal(line)
	}
}

// healthWithTheBrokerStopped stops the stack's broker and checks that the health check says so
// at once: 503, serviceMicroRabbit false, the whole answer well under a second.
func healthWithTheBrokerStopped(t *testing.T, s *Stack, node *brokerNode) {
	require.NoError(t, node.Stop())
	t.Cleanup(func() { _ = node.Start() })
	start := time.Now()
	r := s.Call(t, http.MethodGet, "/v1/health/check/", nil)
	took := time.Since(start)
	assert.Equal(t, http.StatusServiceUnavailable, r.Status, "%s", r.Body)
	assert.False(t, r.Env.Success)
	assert.Contains(t, r.Env.Message, "serviceMicroRabbit")
	rabbit, ok := r.Data(t)["serviceMicroRabbit"].(map[string]any)
	require.True(t, ok, "%s", r.Body)
	assert.Equal(t, false, rabbit["success"])
	assert.Less(t, took, time.Second, "the health check answers in under a second with the broker down")
	t.Logf("health with the broker stopped: %d in %s", r.Status, took)
}

// fault is injected mid-stream: inject returns once the fault is in effect, and no new request
// is sent before it did, so two thirds of the jobs meet the fault whatever the machine's speed;
// heal runs while the clients go on.
type fault struct {
	inject, heal func() error
}

// startFaultStack starts the processes table against dbURL and amqpURL, with a short confirm
// timeout in lead-api.
func startFaultStack(t *testing.T, dbURL, amqpURL string) *Stack {
	t.Helper()
	return startFaultStackWith(t, dbURL, amqpURL, nil)
}

// runFaultScenario sends faultJobs async creates to s through faultClients clients, injects f
// once a third of them are accepted, waits until every accepted job made its lead, and compares.
func runFaultScenario(t *testing.T, s *Stack, label string, f fault) {
	orderR := s.Call(t, http.MethodPost, "/v2/order/create/", minimalOrder("Fault "+label))
	require.Equal(t, http.StatusOK, orderR.Status, "%s", orderR.Body)
	orderID := int64(orderR.Data(t)["id"].(float64))
	detail := s.Call(t, http.MethodGet, "/v2/order/detail/"+strconv.FormatInt(orderID, 10)+"/", nil)
	code := detail.Data(t)["code"].(string)

	// The public API's checked transport (openapi_test.go), over a pool sized for the clients.
	client := &http.Client{Timeout: 30 * time.Second, Transport: openapiCheck.transport(&http.Transport{MaxIdleConnsPerHost: faultClients * 2})}
	run := make([]byte, 4)
	_, _ = rand.Read(run)
	prefix := "fault-" + strings.ReplaceAll(label, " ", "-") + "-" + hex.EncodeToString(run) + "-"

	jobs := make([]string, faultJobs)
	var next, accepted, refused atomic.Int64
	faultDone := make(chan error, 1)
	injected := make(chan struct{})
	var faultOnce sync.Once
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, faultClients)
	for range faultClients {
		wg.Go(func() {
			for {
				if accepted.Load() >= faultJobs/faultAt {
					<-injected
				}
				i := int(next.Add(1)) - 1
				if i >= faultJobs {
					return
				}
				path, body := "/v2/lead/create-async/", map[string]any(v2Lead(orderID, code, faultPhone(label, i)))
				if i%2 == 1 {
					path, body = "/v1/lead/create-async/", v1Lead(orderID, code, faultPhone(label, i))
				}
				id, n503, err := acceptWithRetry(ctx, client, s, path, body, prefix+strconv.Itoa(i))
				refused.Add(int64(n503))
				if err != nil {
					errs <- fmt.Errorf("job %d: %w", i, err)
					return
				}
				jobs[i] = id
				if accepted.Add(1) == faultJobs/faultAt {
					faultOnce.Do(func() {
						go func() {
							err := f.inject()
							close(injected)
							at := accepted.Load()
							if err == nil {
								err = f.heal()
							}
							t.Logf("%s: fault in effect at %d accepted, healed at %d", label, at, accepted.Load())
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
		require.NoError(t, err)
	}
	select {
	case err := <-faultDone:
		require.NoError(t, err, "inject the fault")
	case <-time.After(faultHeal):
		t.Fatal("the fault did not finish")
	}
	t.Logf("%s: %d requests answered 503 during the fault and retried", label, refused.Load())

	seen := map[string]bool{}
	for i, id := range jobs {
		require.NotEmpty(t, id, "job %d never accepted", i)
		require.False(t, seen[id], "job id %s handed out twice", id)
		seen[id] = true
	}
	created, rows := waitLeads(t, s.DatabaseURL, jobs)
	lost, duplicated := len(jobs)-created, rows-created
	line := fmt.Sprintf("%s: accepted=%d created=%d lost=%d duplicated=%d", label, len(jobs), created, lost, duplicated)
	fmt.Println(line)
	if lost != 0 || duplicated != 0 || created != faultJobs {
		t.Fatalf("%s: %s", label, line)
	}
}

// acceptWithRetry sends one async create until it is accepted, with the same Idempotency-Key each
// time (as a client must after a 503), and returns the job id and how many 503s it got.
func acceptWithRetry(ctx context.Context, client *http.Client, s *Stack, path string, body any, key string) (string, int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return "", 0, err
	}
	unavailable := 0
	for {
		status, data, err := post(ctx, client, s, path, raw, key)
		switch {
		case err == nil && status == http.StatusOK:
			var d struct {
				JobID string `json:"jobId"`
			}
			if err := json.Unmarshal(data, &d); err != nil || len(d.JobID) != 36 {
				return "", unavailable, fmt.Errorf("accepted without a job id: %s", data)
			}
			return d.JobID, unavailable, nil
		case err == nil && status != http.StatusServiceUnavailable && status != http.StatusBadGateway && status != http.StatusGatewayTimeout:
			return "", unavailable, fmt.Errorf("status %d: %s", status, data)
		case err == nil:
			unavailable++
		}
		// Not accepted (the broker is away, or the connection broke): send it again.
		select {
		case <-ctx.Done():
			return "", unavailable, fmt.Errorf("never accepted (last: status %d, %v)", status, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// createRetrying sends one sync create (raw, its Idempotency-Key key) until it is answered, as a
// client must across a fault: sent again after a cut connection, a 502/503 (the process or its
// database away), or a 409 for the key still claimed by an attempt the fault cut. It returns the
// lead's id and how many attempts were sent again.
func createRetrying(ctx context.Context, client *http.Client, s *Stack, raw []byte, key string) (int64, int, error) {
	retried := 0
	for {
		status, data, err := post(ctx, client, s, "/v2/lead/create/", raw, key)
		if err == nil && status == http.StatusOK {
			var d struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal(data, &d); err != nil || d.ID <= 0 {
				return 0, retried, fmt.Errorf("200 without an id: %s", data)
			}
			return d.ID, retried, nil
		}
		if ctx.Err() != nil {
			return 0, retried, fmt.Errorf("never answered (last: %d %s %v)", status, data, err)
		}
		if err == nil && status != http.StatusServiceUnavailable && status != http.StatusBadGateway &&
			!(status == http.StatusConflict && strings.Contains(string(data), "still being processed")) {
			return 0, retried, fmt.Errorf("status %d: %s", status, data)
		}
		retried++
		time.Sleep(50 * time.Millisecond)
	}
}

// post sends one request through the gateway (with key as its Idempotency-Key unless empty) and
// returns the status and the envelope's data, or for a refusal the whole envelope (its message
// tells a key still claimed from other conflicts).
func post(ctx context.Context, client *http.Client, s *Stack, path string, body []byte, key string) (int, json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", s.APIKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || resp.StatusCode != http.StatusOK {
		return resp.StatusCode, raw, nil
	}
	return resp.StatusCode, env.Data, nil
}

// faultPhone is a distinct valid number per scenario and job.
func faultPhone(label string, i int) string {
	base := 3000000
	switch label {
	case "lead-worker SIGKILL":
		base = 6000000
	case "cluster leader SIGKILL":
		base = 4000000
	case "cluster client node SIGKILL":
		base = 5000000
	case "cluster rolling restart":
		base = 7000000
	}
	return fmt.Sprintf("7917%07d", base+i)
}

// waitLeads observes the lead service's table directly (the test checks the outcome, it is not a
// service reading another's schema) until every job has its lead or faultDrain passes. created
// counts distinct accepted jobs with a lead, rows all leads of those jobs.
func waitLeads(t *testing.T, dbURL string, jobs []string) (created, rows int) {
	t.Helper()
	conn, err := db.Open(context.Background(), dbURL, "leads", 2)
	require.NoError(t, err)
	defer conn.Close()
	const q = `SELECT count(DISTINCT job_id), count(*) FROM leads WHERE job_id = ANY($1::uuid[])`
	deadline := time.Now().Add(faultDrain)
	for {
		require.NoError(t, conn.QueryRow(q, pq.StringArray(jobs)).Scan(&created, &rows))
		if created == len(jobs) || time.Now().After(deadline) {
			var failed []string
			_ = conn.Select(&failed, `SELECT job_id::text || ': ' || coalesce(reason, '') FROM lead_jobs
				WHERE status = 'failed' AND job_id = ANY($1::uuid[]) LIMIT 5`, pq.StringArray(jobs))
			if len(failed) > 0 {
				t.Errorf("accepted jobs failed: %s", strings.Join(failed, "; "))
			}
			return created, rows
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitCalls observes the call service's table directly, as waitLeads the leads, until want of
// the platform's calls are stored or faultDrain passes. stored counts distinct platform call ids
// stored, rows all rows of those ids.
func waitCalls(t *testing.T, dbURL string, platformIDs []string, want int) (stored, rows int) {
	t.Helper()
	conn, err := db.Open(context.Background(), dbURL, "calls", 2)
	require.NoError(t, err)
	defer conn.Close()
	const q = `SELECT count(DISTINCT platform_call_id), count(*) FROM calls WHERE platform_call_id = ANY($1)`
	deadline := time.Now().Add(faultDrain)
	for {
		require.NoError(t, conn.QueryRow(q, pq.StringArray(platformIDs)).Scan(&stored, &rows))
		if stored >= want || time.Now().After(deadline) {
			return stored, rows
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// brokerNode is a RabbitMQ node of the test's own, on free ports and a data folder of its own, so
// that stopping it disturbs nothing else on the machine.
type brokerNode struct {
	name, dir string
	port      string
	env       []string
	cmd       *exec.Cmd
}

// brokerServer is where Debian's rabbitmq-server package (scripts/deps.sh) puts the node script.
const brokerServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

func startBrokerNode(t *testing.T) *brokerNode {
	t.Helper()
	if _, err := os.Stat(brokerServer); err != nil {
		t.Fatalf("the fault test starts a RabbitMQ node of its own and needs %s (scripts/deps.sh installs it): %v", brokerServer, err)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "enabled_plugins"), nil, 0o644))
	amqpAddr, err := freeport.Addr()
	require.NoError(t, err)
	distAddr, err := freeport.Addr()
	require.NoError(t, err)
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	n := &brokerNode{name: "ccfault-" + hex.EncodeToString(suffix) + "@localhost", dir: dir}
	n.port = amqpAddr[strings.LastIndex(amqpAddr, ":")+1:]
	// HOME holds the Erlang cookie that the node and rabbitmqctl share; the config files named
	// here do not exist, so the node runs on defaults and nothing of the machine's own broker.
	n.env = append(os.Environ(),
		"HOME="+dir,
		"RABBITMQ_NODENAME="+n.name,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+n.port,
		// Loopback only, like the development broker (scripts/deps.sh): distribution and epmd too.
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
		"RABBITMQ_DIST_PORT="+distAddr[strings.LastIndex(distAddr, ":")+1:],
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(dir, "advanced.config"),
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"),
	)
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Logf("stop broker node: %v", err)
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "node.log"))
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			fmt.Fprintf(os.Stderr, "---- broker node (tail) ----\n%s\n", b)
		}
	})
	require.NoError(t, n.Start())
	return n
}

// URL is the node's default vhost.
func (n *brokerNode) URL() string { return "amqp://guest:guest@127.0.0.1:" + n.port + "/" }

// Start starts the node (on the same data folder after a Stop: quorum queues keep what they
// confirmed) and waits until it accepts AMQP connections.
func (n *brokerNode) Start() error {
	logf, err := os.OpenFile(filepath.Join(n.dir, "node.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(brokerServer)
	cmd.Dir = n.dir
	cmd.Env = n.env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start broker node: %w", err)
	}
	n.cmd = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	// The AMQP port opens late in the boot, after the node registered with epmd; await_startup
	// then waits for the boot to finish.
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-exited:
			return errors.New("broker node exited at start (see node.log)")
		default:
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+n.port, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return errors.New("broker node did not open its AMQP port in 90 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return n.ctl(ctx, "await_startup", "--timeout", "60")
}

// Stop halts the node the way an operator does (rabbitmqctl stop), and kills what is left.
func (n *brokerNode) Stop() error {
	if n.cmd == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := n.ctl(ctx, "stop")
	_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	n.cmd = nil
	return err
}

func (n *brokerNode) ctl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(brokerServer), "rabbitmqctl"), append([]string{"-n", n.name}, args...)...)
	cmd.Env = n.env
	cmd.Dir = n.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rabbitmqctl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// syncCreated counts sync creates against the database at dbURL: ids[i] is the lead the i-th create
// of order orderID was answered with (0: none), phone(i) its number without the +. A create counts as
// created when its number's first lead is the one answered; every further lead of a number is a
// duplicate.
func syncCreated(t *testing.T, dbURL string, orderID int64, ids []int64, phone func(i int) string) (created, duplicated int) {
	t.Helper()
	conn, err := db.Open(context.Background(), dbURL, "leads", 2)
	require.NoError(t, err)
	defer conn.Close()
	phones := make([]string, len(ids))
	for i := range phones {
		phones[i] = "+" + phone(i)
	}
	var rows []struct {
		ID    int64  `db:"id"`
		Phone string `db:"phone"`
	}
	require.NoError(t, conn.Select(&rows, `SELECT id, phone FROM leads WHERE order_id = $1 AND phone = ANY($2) ORDER BY id`, orderID, pq.StringArray(phones)))
	byPhone := map[string][]int64{}
	for _, r := range rows {
		byPhone[r.Phone] = append(byPhone[r.Phone], r.ID)
	}
	for i, id := range ids {
		got := byPhone[phones[i]]
		if len(got) > 0 && got[0] == id {
			created++
		}
		if len(got) > 1 {
			duplicated += len(got) - 1
		}
	}
	return created, duplicated
}
