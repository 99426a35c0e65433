//go:build cluster

// The cluster fault test is built only with the "cluster" tag: scripts/cluster-test.sh (make
// test-cluster) brings up the three-node RabbitMQ cluster of scripts/rabbitmq-cluster.sh, runs it
// with CLUSTER_AMQP_URL listing the nodes, checks its accounting lines and brings the cluster down.

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccplatform/gateway/e2e/stacktest"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The queues the scenarios watch: async lead creates and call events.
const (
	clusterJobsQueue  = "lead.jobs"
	clusterCallsQueue = telephony.Queue
)

// TestRabbitMQCluster runs a stack whose every process has AMQP_URL listing the cluster's three
// nodes, and sends async lead creates and call events through it while (a) the node leading the
// queue is SIGKILLed, (b) the node the services are connected to is SIGKILLed, (c) every node is
// stopped and started again in turn (a rolling upgrade). Each scenario prints its accounting line
// and checks that every accepted job made exactly one lead and every confirmed call event was
// stored exactly once; under (b) also that every sync create's lead.created reached a webhook
// endpoint (webhook-dispatcher's node killed).
func TestRabbitMQCluster(t *testing.T) {
	urls := mq.SplitURLs(os.Getenv("CLUSTER_AMQP_URL"))
	if len(urls) != 3 {
		t.Skip("CLUSTER_AMQP_URL lists no three-node cluster (scripts/rabbitmq-cluster.sh url)")
	}
	rc := newRabbitCluster(t)
	vhostURLs := rc.vhost(t, urls)
	// The queues are declared through node 3 before the stack starts (its processes connect to
	// node 1 first): their leader is then a node no service is connected to, so the first
	// scenario kills a leader alone.
	pre := mq.Dial(vhostURLs[2], "cluster-test-topology", zap.NewNop(), mq.WorkQueue(clusterJobsQueue), mq.WorkQueue(clusterCallsQueue))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, pre.Wait(ctx))
	pre.Close()

	dbURL, drop, err := dbtest.Create("e2e_cluster")
	require.NoError(t, err)
	t.Cleanup(func() { _ = drop() })
	s := startFaultStack(t, dbURL, strings.Join(vhostURLs, ","))

	t.Run("leader SIGKILL", func(t *testing.T) {
		runFaultScenario(t, s, "cluster leader SIGKILL", rc.killLeader(t, clusterJobsQueue))
		runCallIngestScenario(t, s, "cluster leader SIGKILL", rc.killLeader(t, clusterCallsQueue))
	})
	t.Run("client node SIGKILL", func(t *testing.T) {
		runFaultScenario(t, s, "cluster client node SIGKILL", rc.killClientNode(t, "lead-api", clusterJobsQueue))
		runCallIngestScenario(t, s, "cluster client node SIGKILL", rc.killClientNode(t, "call-ingest", clusterCallsQueue))
		runWebhookScenario(t, s, "cluster client node SIGKILL webhooks", 8, rc.killClientNode(t, "webhook-dispatcher", "webhook.events"))
	})
	t.Run("rolling restart", func(t *testing.T) {
		runFaultScenario(t, s, "cluster rolling restart", rc.rollingRestart(t))
		runCallIngestScenario(t, s, "cluster rolling restart", rc.rollingRestart(t))
	})
}

// rabbitCluster drives the cluster through scripts/rabbitmq-cluster.sh.
type rabbitCluster struct {
	script, vhostName string
}

func newRabbitCluster(t *testing.T) *rabbitCluster {
	root, err := stacktest.RepoRoot()
	require.NoError(t, err)
	return &rabbitCluster{script: filepath.Join(root, "scripts", "rabbitmq-cluster.sh")}
}

// nodes are the cluster's node numbers, as the script names them.
var clusterNodes = []int{1, 2, 3}

func (c *rabbitCluster) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.script, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return "", fmt.Errorf("rabbitmq-cluster.sh %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out), nil
}

// ctl runs rabbitmqctl against the first node that answers it.
func (c *rabbitCluster) ctl(args ...string) (string, error) {
	var errs []string
	for _, n := range clusterNodes {
		out, err := c.run(append([]string{"ctl", strconv.Itoa(n)}, args...)...)
		if err == nil {
			return out, nil
		}
		errs = append(errs, err.Error())
	}
	return "", fmt.Errorf("no node answers: %s", strings.Join(errs, "; "))
}

// vhost makes a virtual host of the test's own on the cluster (removed at the end), so that a
// second run on the same cluster finds no queue of the first, and returns the node URLs on it.
func (c *rabbitCluster) vhost(t *testing.T, urls []string) []string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	c.vhostName = "e2e-cluster-" + hex.EncodeToString(b)
	_, err := c.ctl("add_vhost", c.vhostName)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.ctl("delete_vhost", c.vhostName) })
	_, err = c.ctl("set_permissions", "-p", c.vhostName, "guest", ".*", ".*", ".*")
	require.NoError(t, err)
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = strings.TrimSuffix(u, "/") + "/" + c.vhostName
	}
	return out
}

var nodeName = regexp.MustCompile(`rabbit-c(\d)@`)

// leaderOf is the number of the node leading queue.
func (c *rabbitCluster) leaderOf(queue string) (int, error) {
	out, err := c.ctl("list_queues", "-p", c.vhostName, "--quiet", "--no-table-headers", "name", "leader")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == queue {
			if m := nodeName.FindStringSubmatch(f[1]); m != nil {
				return strconv.Atoi(m[1])
			}
		}
	}
	return 0, fmt.Errorf("no leader of %s in:\n%s", queue, out)
}

// clientNode is the number of the node the connection named name (a service's) is on: the
// broker lists each connection with the AMQP port it came in on, 5700 + the node's number, and
// the client's properties, where its connection name is.
func (c *rabbitCluster) clientNode(name string) (int, error) {
	out, err := c.ctl("list_connections", "--quiet", "--no-table-headers", "port", "vhost", "client_properties")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) == 3 && f[1] == c.vhostName && strings.Contains(f[2], `"`+name+`"`) {
			port, err := strconv.Atoi(f[0])
			if err != nil {
				return 0, fmt.Errorf("connection line %q: %w", line, err)
			}
			return port - 5700, nil
		}
	}
	return 0, fmt.Errorf("no connection of %s in:\n%s", name, out)
}

// kill SIGKILLs the beam of node n (the process listening on its AMQP port): no goodbye to its
// clients or its peers, as when its machine dies.
func (c *rabbitCluster) kill(n int) error {
	port := strconv.Itoa(5700 + n)
	out, err := exec.Command("ss", "-ltnpH", "sport = :"+port).Output()
	if err != nil {
		return fmt.Errorf("ss: %w", err)
	}
	pid := regexp.MustCompile(`pid=(\d+)`).FindSubmatch(out)
	if pid == nil {
		return fmt.Errorf("nothing listens on %s", port)
	}
	p, _ := strconv.Atoi(string(pid[1]))
	if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill node %d: %w", n, err)
	}
	// The signal is delivered at once but the beam takes a moment to die: until its port is
	// closed, `up` would take the node for running and not start it again.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err != nil {
			return nil
		}
		conn.Close()
	}
	return fmt.Errorf("node %d (pid %d) still alive 30 s after SIGKILL", n, p)
}

// up starts what is not running and waits until the three nodes run as one cluster.
func (c *rabbitCluster) up() error {
	_, err := c.run("up")
	return err
}

// killLeader is the fault of the node leading queue SIGKILLed and started again.
func (c *rabbitCluster) killLeader(t *testing.T, queue string) fault {
	return fault{
		inject: func() error {
			n, err := c.leaderOf(queue)
			if err != nil {
				return err
			}
			client, _ := c.clientNode("lead-api")
			t.Logf("killing node %d, leader of %s (lead-api is on node %d)", n, queue, client)
			return c.kill(n)
		},
		heal: c.up,
	}
}

// killClientNode is the fault of the node the service named client is connected to SIGKILLed
// and started again.
func (c *rabbitCluster) killClientNode(t *testing.T, client, queue string) fault {
	return fault{
		inject: func() error {
			n, err := c.clientNode(client)
			if err != nil {
				return err
			}
			leader, _ := c.leaderOf(queue)
			t.Logf("killing node %d, which %s is connected to (%s is led by node %d)", n, client, queue, leader)
			return c.kill(n)
		},
		heal: c.up,
	}
}

// rollingRestart stops node 1 the way an operator does (rabbitmqctl stop), starts it again and
// waits until it is back in the cluster, then the same for node 2 and node 3, while the clients
// go on: inject is node 1's stop, heal the rest.
func (c *rabbitCluster) rollingRestart(t *testing.T) fault {
	stop := func(n int) error {
		t.Logf("stopping node %d", n)
		_, err := c.run("ctl", strconv.Itoa(n), "stop")
		return err
	}
	return fault{
		inject: func() error { return stop(1) },
		heal: func() error {
			for _, n := range clusterNodes {
				if n > 1 {
					if err := stop(n); err != nil {
						return err
					}
				}
				if err := c.up(); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
