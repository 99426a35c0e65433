package lead_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/walrelay"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/wiring"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walEvents are the lead events the package's slot holds, oldest first.
func walEvents(t *testing.T) []walrelay.Message {
	t.Helper()
	var s wiring.Settings
	s.Database.URL = dbURL
	slot, err := wiring.Slot(s)
	require.NoError(t, err)
	msgs, err := walrelay.Peek(context.Background(), conn, slot, lead.EventsPublication, lead.EventsPrefix)
	require.NoError(t, err)
	return msgs
}

// A replay announces every lead changed in the window, as it is now, in updated_at order:
// lead.created for those created in it, lead.updated for the others; a second replay of the same
// window writes the same event ids.
func TestReplayAnnouncesTheLeadsOfTheWindowWithStableIDs(t *testing.T) {
	ctx := context.Background()
	order := newOrder()
	since := time.Now().Add(-time.Second)
	stored := insertBatch(t, newLead(order, "+79161239001"), newLead(order, "+79161239002"), newLead(order, "+79161239003"))
	// The second was created before the window and changed in it; the third changed after it.
	_, err := conn.Exec(`UPDATE leads SET created_at = now() - interval '1 hour' WHERE id = $1`, stored[1].ID)
	require.NoError(t, err)
	_, err = conn.Exec(`UPDATE leads SET updated_at = now() + interval '1 hour' WHERE id = $1`, stored[2].ID)
	require.NoError(t, err)
	until := time.Now().Add(time.Minute)

	before := len(walEvents(t))
	n, err := lead.ReplayEvents(ctx, conn, since, until)
	require.NoError(t, err)
	var mine []walrelay.Message
	for _, m := range walEvents(t)[before:] {
		if m.Order == strconv.FormatInt(stored[0].ID, 10) || m.Order == strconv.FormatInt(stored[1].ID, 10) ||
			m.Order == strconv.FormatInt(stored[2].ID, 10) {
			mine = append(mine, m)
		}
	}
	require.Len(t, mine, 2, "the two leads of the window")
	assert.GreaterOrEqual(t, n, 2)
	assert.Equal(t, []string{lead.EventCreated, lead.EventUpdated}, []string{mine[0].Key, mine[1].Key})
	for i, m := range mine {
		ev, err := event.Decode(m.Msg.Body)
		require.NoError(t, err)
		assert.Equal(t, m.Msg.ID, ev.ID)
		assert.Equal(t, stored[i].ID, mustLeadID(t, ev))
		assert.Equal(t, event.Exchange, m.Exchange)
	}

	before = len(walEvents(t))
	_, err = lead.ReplayEvents(ctx, conn, since, until)
	require.NoError(t, err)
	var again []string
	for _, m := range walEvents(t)[before:] {
		if m.Order == mine[0].Order || m.Order == mine[1].Order {
			again = append(again, m.Msg.ID)
		}
	}
	assert.Equal(t, []string{mine[0].Msg.ID, mine[1].Msg.ID}, again)
}

func mustLeadID(t *testing.T, ev event.Event) int64 {
	t.Helper()
	var v lead.View
	require.NoError(t, json.Unmarshal(ev.Data, &v))
	return v.ID
}
