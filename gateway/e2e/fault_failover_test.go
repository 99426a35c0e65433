//go:build cluster

// The failover test is built only with the "cluster" tag: scripts/cluster-test.sh (make
// test-cluster) brings up the primary, its synchronous standby and HAProxy of
// scripts/postgres-ha.sh, runs it with PGHA_DATABASE_URL (HAProxy's address), checks its
// accounting line and brings the pair down.

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/gateway/e2e/stacktest"
	"ccplatform/pkg/mqtest"

	"github.com/stretchr/testify/require"
)

// failoverCreates is the stream of sync creates across the failover.
const failoverCreates = 600

// TestPostgresFailover runs a stack whose every process has DATABASE_URL pointing at HAProxy, sends
// sync lead creates through it, and once a third are answered stops the primary at once (pg_ctl
// -m immediate: its sessions end without a goodbye) and promotes the standby, which HAProxy's check
// then routes to. Every create is sent until answered with its Idempotency-Key; no answer may be a
// 500 (503s are counted), and every create answered 200 must exist afterwards, exactly once.
//
// Lead events are not counted here: the logical slot they leave through does not survive the
// promotion (PostgreSQL 15 keeps no slot on a standby), so the relays make a new one on the new
// primary and what was committed between the last confirmed position and then is not relayed.
// docs/operations.md ("PostgreSQL failover") says what an operator does then: the replay of the
// window (lead-worker replay-events).
func TestPostgresFailover(t *testing.T) {
	dbURL := os.Getenv("PGHA_DATABASE_URL")
	if dbURL == "" {
		t.Skip("PGHA_DATABASE_URL names no HAProxy address (scripts/postgres-ha.sh url)")
	}
	ha := newPGHA(t)
	out, err := ha.run("status")
	require.NoError(t, err)
	require.Contains(t, out, "node a: primary", "the pair must be fresh (scripts/postgres-ha.sh down, then up):\n%s", out)
	require.Contains(t, out, "node b: standby", "the pair must be fresh (scripts/postgres-ha.sh down, then up):\n%s", out)

	amqpURL, dropVhost, err := mqtest.CreateVhost("e2e_pgfailover")
	require.NoError(t, err)
	t.Cleanup(func() { _ = dropVhost() })
	// A verified key stays cached, so that requests during the switch reach the services.
	s := startFaultStackWith(t, dbURL, amqpURL, map[string][]string{"gateway": {"AUTH_CACHE_TTL=10m"}})

	orderID := createOrderOn(t, s, "Fault postgres failover")
	code := s.Call(t, http.MethodGet, "/v2/order/detail/"+strconv.FormatInt(orderID, 10)+"/", nil).Data(t)["code"].(string)
	client := faultClient()
	prefix := runPrefix("fault-failover")
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 4*time.Minute)
	defer cancel()

	leads := make([]int64, failoverCreates)
	var unavailable, cut atomic.Int64
	var mu sync.Mutex
	other := map[string]int{} // an answer neither 200, 503, 502 nor a 409 for a key still claimed
	err = midStream{total: failoverCreates, fault: fault{
		inject: func() error { _, err := ha.run("stop", "a"); return err },
		heal: func() error {
			// The operator's (or the orchestrator's) decision takes a moment: the clients meet a
			// database that is simply gone meanwhile.
			time.Sleep(time.Second)
			_, err := ha.run("promote")
			return err
		},
	}}.run(ctx, func(i int) error {
		raw, _ := json.Marshal(v2Lead(orderID, code, failoverPhone(i)))
		key := prefix + strconv.Itoa(i)
		for {
			status, data, err := post(ctx, client, s, "/v2/lead/create/", raw, key)
			if ctx.Err() != nil {
				return fmt.Errorf("never created (last: %d %s %v)", status, data, err)
			}
			switch {
			case err == nil && status == http.StatusOK:
				var d struct {
					ID int64 `json:"id"`
				}
				if err := json.Unmarshal(data, &d); err != nil || d.ID <= 0 {
					return fmt.Errorf("200 without an id: %s", data)
				}
				leads[i] = d.ID
				return nil
			case err != nil, status == http.StatusBadGateway:
				// A cut connection: sent again with its key (counted: no process is killed here, so
				// there should be none).
				cut.Add(1)
			case status == http.StatusServiceUnavailable:
				unavailable.Add(1)
			case status == http.StatusConflict && strings.Contains(string(data), "still being processed"):
				// An attempt the switch cut left its key claimed.
			default:
				mu.Lock()
				other[strconv.Itoa(status)+" "+string(data)]++
				mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	require.NoError(t, err)
	status, err := ha.run("status")
	require.NoError(t, err)
	t.Logf("after the failover:\n%s", status)
	fmt.Printf("postgres failover: sync answers during the switch: 503=%d other=%d (cut connections or 502: %d)\n",
		unavailable.Load(), len(other), cut.Load())
	require.Empty(t, other, "answers during the switch other than 200, 502, 503 and a 409 for a key still claimed")

	// Every 200 named a lead that exists on the new primary with its phone; one lead per phone.
	created, duplicated := syncCreated(t, dbURL, orderID, leads, failoverPhone)
	line := fmt.Sprintf("postgres failover: accepted=%d created=%d lost=%d duplicated=%d", failoverCreates, created, failoverCreates-created, duplicated)
	fmt.Println(line)
	if created != failoverCreates || duplicated != 0 {
		t.Fatal(line)
	}
}

// failoverPhone is a distinct valid number per create of the failover scenario.
func failoverPhone(i int) string { return fmt.Sprintf("7915%07d", 5000000+i) }

// pgHA drives the pair through scripts/postgres-ha.sh.
type pgHA struct{ script string }

func newPGHA(t *testing.T) *pgHA {
	root, err := stacktest.RepoRoot()
	require.NoError(t, err)
	return &pgHA{script: filepath.Join(root, "scripts", "postgres-ha.sh")}
}

func (h *pgHA) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, h.script, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("postgres-ha.sh %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
