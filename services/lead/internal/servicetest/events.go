package servicetest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"ccplatform/pkg/event"
	"ccplatform/pkg/walrelay"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/wiring"

	"github.com/stretchr/testify/require"
)

// Events are the events of type typ the service wrote into the WAL that its slot still holds (all
// of them while no relay ran), oldest first. Each must be routed as lead.Emit routes it (events
// exchange, the type as routing key and AMQP type, the event id as message id), which is checked
// here once for every test.
func (e *Env) Events(t testing.TB, typ string) []event.Event {
	t.Helper()
	slot, err := wiring.Slot(e.Settings)
	require.NoError(t, err)
	// A relay a test ran may still be letting go of the slot.
	msgs, err := walrelay.Peek(context.Background(), e.DB, slot, lead.EventsPublication, lead.EventsPrefix)
	for deadline := time.Now().Add(10 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		msgs, err = walrelay.Peek(context.Background(), e.DB, slot, lead.EventsPublication, lead.EventsPrefix)
	}
	require.NoError(t, err, "peek the slot")
	var out []event.Event
	for _, m := range msgs {
		if m.Key != typ {
			continue
		}
		ev, err := event.Decode(m.Msg.Body)
		require.NoError(t, err)
		require.Equal(t, event.Exchange, m.Exchange)
		require.Equal(t, typ, m.Msg.Type)
		require.Equal(t, typ, ev.Type)
		require.Equal(t, ev.ID, m.Msg.ID)
		out = append(out, ev)
	}
	return out
}

// LeadEvents are the events of type typ recorded about lead id (their data's id), oldest first.
func (e *Env) LeadEvents(t testing.TB, typ string, id int64) []event.Event {
	t.Helper()
	var out []event.Event
	for _, ev := range e.Events(t, typ) {
		if LeadOf(t, ev).ID == id {
			out = append(out, ev)
		}
	}
	return out
}

// LeadOf is the lead an event carries.
func LeadOf(t testing.TB, ev event.Event) lead.View {
	t.Helper()
	var v lead.View
	require.NoError(t, json.Unmarshal(ev.Data, &v), "data of %s %s", ev.Type, ev.ID)
	return v
}

// Detail is the data of GET /v2/lead/detail/:id, as an admin sees it (phones unmasked, as events
// carry them).
func (e *Env) Detail(t testing.TB, id int64) json.RawMessage {
	t.Helper()
	res := e.Do(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(id, 10), nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	return res.Data
}
