//go:build fault || cluster

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// poisonGood is how many good call events surround the poison ones.
const poisonGood = 200

// TestPoisonCallEvents publishes, as the telephony platform does, call events the database cannot
// take among good ones: a call of the year 0000 (which PostgreSQL refuses) and one dated
// 9999-12-31 (which would freeze its lead), each ahead of a run of good events, so that they share
// batches and consumers with them. Every good event must be stored once, each poison one
// dead-lettered with its reason, and call-ingest must not be left stalled on them.
func TestPoisonCallEvents(t *testing.T) {
	conn := mq.Dial(stack.AMQPURL, "poison-telephony-platform", zap.NewNop(), mq.WorkQueue(telephony.Queue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	publish := func(ev telephony.CallEvent) {
		body, err := json.Marshal(ev)
		require.NoError(t, err)
		require.NoError(t, pub.Publish(ctx, "", telephony.Queue, mq.Message{ID: ev.EventID, Type: telephony.EventType, Body: body}))
	}

	const lead = 930001
	poison := map[string]string{} // event id → what its dead-letter reason must say
	var good []string             // platform call ids
	for i := range poisonGood {
		switch i {
		case 0:
			ev := platformCall(lead, 1, 1, telephony.StatusAnswered, telephony.DirectionOutgoing, time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC), 40*time.Second)
			poison[ev.EventID] = "startedAt: must be from 0001-01-01T00:00:00Z"
			publish(ev)
		case poisonGood / 2:
			ev := platformCall(lead, 1, 1, telephony.StatusAnswered, telephony.DirectionOutgoing, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), 40*time.Second)
			poison[ev.EventID] = "endedAt: must be at most 5 minutes after the event is received"
			publish(ev)
		}
		ev := platformCall(lead+int64(i)+1, 1, 1, telephony.StatusNoAnswer, telephony.DirectionOutgoing, time.Now().Add(-time.Hour), 0)
		publish(ev)
		good = append(good, ev.PlatformCallID)
	}

	stored, rows := waitCalls(t, stack.DatabaseURL, good, poisonGood)
	line := fmt.Sprintf("poison event calls: published=%d stored=%d lost=%d duplicated=%d", poisonGood, stored, poisonGood-stored, rows-stored)
	fmt.Println(line)
	if stored != poisonGood || rows != stored {
		t.Fatal(line)
	}

	reasons := deadLettered(t, conn, telephony.Queue+mq.DeadLetterSuffix, poison)
	for id, want := range poison {
		assert.Contains(t, reasons[id], want, "dead letter %s", id)
	}
	fmt.Printf("poison event calls: dead-lettered=%d of %d\n", len(reasons), len(poison))
	calls, err := db.Open(context.Background(), stack.DatabaseURL, "calls", 2)
	require.NoError(t, err)
	defer calls.Close()
	var kept int
	require.NoError(t, calls.QueryRowContext(ctx, `SELECT count(*) FROM calls WHERE lead_id = $1`, lead).Scan(&kept))
	assert.Zero(t, kept, "no poison call stored")

	// Nothing is left unacked behind them: the health check (which reads call-ingest's /readyz)
	// is all up.
	r := waitStatus(t, http.StatusOK, func() Response { return stack.Call(t, http.MethodGet, "/v1/health/check/", nil) })
	assert.True(t, r.Env.Success, "%s", r.Body)
	_, messages, err := conn.QueueConsumers(ctx, telephony.Queue)
	require.NoError(t, err)
	assert.Zero(t, messages, "telephony.calls drained")
}

// deadLettered reads the dead-letter queue until it has seen every id of want (or a deadline
// passed) and returns their x-dead-letter-reason. Every message it reads goes back to the queue
// when its channel closes: the dead letters of other tests stay where they are.
func deadLettered(t *testing.T, conn *mq.Conn, queue string, want map[string]string) map[string]string {
	t.Helper()
	found := map[string]string{}
	deadline := time.Now().Add(30 * time.Second)
	for len(found) < len(want) && time.Now().Before(deadline) {
		ch, err := conn.Channel(context.Background())
		require.NoError(t, err)
		for {
			d, ok, err := ch.Get(queue, false)
			require.NoError(t, err)
			if !ok {
				break
			}
			if _, mine := want[d.MessageId]; mine {
				reason, _ := d.Headers["x-dead-letter-reason"].(string)
				found[d.MessageId] = reason
			}
		}
		_ = ch.Close()
		if len(found) < len(want) {
			time.Sleep(200 * time.Millisecond)
		}
	}
	return found
}
