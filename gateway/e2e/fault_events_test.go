//go:build fault || cluster

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/walrelay"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// eventCreates is the stream of each lead-event scenario: sync creates, one lead.created each.
const eventCreates = 600

// leadEvents is a consumer of lead.created as any service would have one: a quorum queue of the
// test's own bound to the events exchange (it outlives a broker restart), groups split, each
// event recorded under its lead. Counted by event id: one lead's one event delivered twice is a
// repeat (at least once, consumers dedupe by eventId); two event ids for one lead is a duplicate.
type leadEvents struct {
	mu      sync.Mutex
	ids     map[int64]map[string]bool
	repeats int
}

// countLeadCreated starts a leadEvents on s's broker until the test ends.
func countLeadCreated(t *testing.T, s *Stack) *leadEvents {
	t.Helper()
	queue := "fault.lead-events." + strings.TrimSuffix(runPrefix("q"), "-")
	c := &leadEvents{ids: map[int64]map[string]bool{}}
	conn := mq.Dial(s.AMQPURL, "fault-lead-events", zap.NewNop(), mq.Subscription(event.Exchange, queue, "lead.created"))
	ctx, cancel := context.WithCancel(context.Background())
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	require.NoError(t, conn.Wait(wctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = conn.Consume(ctx, mq.ConsumerConfig{Queue: queue, Prefetch: 1000, BatchSize: 200, BatchWait: 5 * time.Millisecond,
			Workers: 1, MaxAttempts: 5, Tag: "fault-lead-events"}, c.handle)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		if ch, err := conn.Channel(dctx); err == nil {
			_, _ = ch.QueueDelete(queue, false, false, false)
			_, _ = ch.QueueDelete(queue+mq.DeadLetterSuffix, false, false, false)
			_ = ch.Close()
		}
		conn.Close()
	})
	return c
}

func (c *leadEvents) handle(_ context.Context, batch []mq.Delivery) []mq.Result {
	out := make([]mq.Result, len(batch))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, d := range batch {
		evs, _, err := event.Expand(d.Type, d.Body)
		if err != nil {
			out[i] = mq.Result{Outcome: mq.DeadLetter, Reason: err.Error()}
			continue
		}
		for _, ev := range evs {
			var data struct {
				ID int64 `json:"id"`
			}
			if ev.Type != "lead.created" || json.Unmarshal(ev.Data, &data) != nil {
				continue
			}
			if c.ids[data.ID] == nil {
				c.ids[data.ID] = map[string]bool{}
			}
			if c.ids[data.ID][ev.ID] {
				c.repeats++
			}
			c.ids[data.ID][ev.ID] = true
		}
	}
	return out
}

// account waits until every lead of leads has its event (or faultDrain passes) and returns how
// many have one, how many have more than one event id, and the repeats of an event id.
func (c *leadEvents) account(leads []int64) (created, duplicated, repeats int) {
	for deadline := time.Now().Add(faultDrain); ; {
		c.mu.Lock()
		created, duplicated = 0, 0
		for _, id := range leads {
			if n := len(c.ids[id]); n > 0 {
				created++
				if n > 1 {
					duplicated++
				}
			}
		}
		repeats = c.repeats
		c.mu.Unlock()
		if created == len(leads) || time.Now().After(deadline) {
			return created, duplicated, repeats
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runEventScenario sends eventCreates sync creates through s (each with its Idempotency-Key, sent
// again after a 502/503 or a cut connection until answered), injects f once a third are answered,
// and checks at a consumer of the events exchange that every created lead's lead.created arrived
// under one event id: lost=0 duplicated=0, counted by event id.
func runEventScenario(t *testing.T, s *Stack, label string, scenario int, f fault) {
	counter := countLeadCreated(t, s)
	orderID := createOrderOn(t, s, "Fault "+label)
	code := s.Call(t, http.MethodGet, "/v2/order/detail/"+strconv.FormatInt(orderID, 10)+"/", nil).Data(t)["code"].(string)
	client := faultClient()
	prefix := runPrefix("fault-events")
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), 3*time.Minute)
	defer cancel()

	leads := make([]int64, eventCreates)
	var retried atomic.Int64
	err := midStream{total: eventCreates, fault: f}.run(ctx, func(i int) error {
		raw, _ := json.Marshal(v2Lead(orderID, code, fmt.Sprintf("7918%07d", scenario*1000000+i)))
		id, n, err := createRetrying(ctx, client, s, raw, prefix+strconv.Itoa(i))
		leads[i] = id
		retried.Add(int64(n))
		return err
	})
	require.NoError(t, err)
	t.Logf("%s: %d attempts sent again", label, retried.Load())

	created, duplicated, repeats := counter.account(leads)
	line := fmt.Sprintf("%s: accepted=%d created=%d lost=%d duplicated=%d", label, len(leads), created, len(leads)-created, duplicated)
	fmt.Println(line)
	fmt.Printf("%s repeats: at least once, %d deliveries of an event id already received (deduped by eventId)\n", label, repeats)
	if created != len(leads) || duplicated != 0 {
		t.Fatal(line)
	}
}

// slotHolder is the process whose relay holds the lead events' slot of s's database, waiting
// until one does.
func slotHolder(t *testing.T, s *Stack) string {
	t.Helper()
	name, err := walrelay.DatabaseOf(s.DatabaseURL)
	require.NoError(t, err)
	slot := walrelay.SlotName("lead_events", name)
	conn, err := db.Open(context.Background(), s.DatabaseURL, "public", 1)
	require.NoError(t, err)
	defer conn.Close()
	var holder string
	require.Eventually(t, func() bool {
		err := conn.Get(&holder, `SELECT r.application_name FROM pg_replication_slots s
			JOIN pg_stat_replication r ON r.pid = s.active_pid WHERE s.slot_name = $1`, slot)
		return err == nil && holder != ""
	}, 30*time.Second, 50*time.Millisecond, "no relay holds %s", slot)
	return holder
}

// testRelayKill: sync creates while the process holding the slot (lead-api or lead-worker) is
// SIGKILLed mid-stream and started again. The events it published but had not confirmed to the
// slot are published again (by the other process's relay, or its own once back) under the same
// event ids: none lost, none announced twice.
func testRelayKill(t *testing.T) {
	var holder string
	runEventScenario(t, stack, "relay SIGKILL", 1, fault{
		inject: func() error {
			holder = slotHolder(t, stack)
			stack.Stop(holder, syscall.SIGKILL)
			return nil
		},
		heal: func() error { return stack.Start(holder) },
	})
	t.Logf("relay SIGKILL: %s held the slot", holder)
}
