//go:build cluster

// Against the three-node cluster of scripts/rabbitmq-cluster.sh (make test-cluster), named by
// CLUSTER_AMQP_URL.

package mq

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// The node the connection uses is SIGKILLed mid-stream: every publish is confirmed (re-sent on
// the next node where the loss left it unconfirmed) and every confirmed message is consumed.
func TestClusterNodeKilledMidStream(t *testing.T) {
	urls := SplitURLs(os.Getenv("CLUSTER_AMQP_URL"))
	if len(urls) < 3 {
		t.Skip("CLUSTER_AMQP_URL lists no three-node cluster (scripts/rabbitmq-cluster.sh url)")
	}
	q := fmt.Sprintf("t.cluster.%d", time.Now().UnixNano())
	c := Dial(os.Getenv("CLUSTER_AMQP_URL"), t.Name(), zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel)), WorkQueue(q))
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, c.Wait(ctx))
	victim := urls[(c.next-1)%len(urls)]
	p := NewPublisher(c)
	defer p.Close()

	const n = 600
	var confirmed atomic.Int64
	killed := make(chan error, 1)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := w; i < n; i += 6 {
				require.NoError(t, p.Publish(ctx, "", q, msg(i)), "message %d", i)
				if confirmed.Add(1) == n/3 {
					killed <- killNode(victim)
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, <-killed)
	require.Greater(t, c.Connects(), int64(1), "the connection moved to another node")

	var mu sync.Mutex
	seen := map[string]int{}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Consume(cctx, ConsumerConfig{Queue: q, Workers: 2, BatchSize: 50, Tag: "t"}, func(_ context.Context, b []Delivery) []Result {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range b {
				seen[d.MessageId]++
			}
			return make([]Result, len(b))
		})
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == n }, time.Minute, 50*time.Millisecond)
	stop()
	<-done
	dup := 0
	for _, k := range seen {
		dup += k - 1
	}
	// At least once: a message re-sent after the loss may be there twice; none is missing.
	fmt.Printf("mq node SIGKILL: confirmed=%d consumed=%d lost=0 redelivered=%d\n", n, len(seen), dup)
	require.NoError(t, restartCluster())
}

// killNode SIGKILLs the beam listening on the port of url.
func killNode(url string) error {
	port := regexp.MustCompile(`:(\d+)/`).FindStringSubmatch(url)
	if port == nil {
		return fmt.Errorf("no port in %s", url)
	}
	out, err := exec.Command("ss", "-ltnpH", "sport = :"+port[1]).Output()
	if err != nil {
		return fmt.Errorf("ss: %w", err)
	}
	pid := regexp.MustCompile(`pid=(\d+)`).FindSubmatch(out)
	if pid == nil {
		return fmt.Errorf("nothing listens on %s", port[1])
	}
	n, _ := strconv.Atoi(string(pid[1]))
	return syscall.Kill(n, syscall.SIGKILL)
}

// restartCluster starts the killed node again, for the tests after this one.
func restartCluster() error {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "rabbitmq-cluster.sh")
	if out, err := exec.Command(script, "up").CombinedOutput(); err != nil {
		return fmt.Errorf("rabbitmq-cluster.sh up: %w\n%s", err, out)
	}
	return nil
}
