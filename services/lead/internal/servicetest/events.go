package servicetest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"ccplatform/pkg/event"
	"ccplatform/services/lead/internal/lead"

	"github.com/stretchr/testify/require"
)

// Events are the events of type typ recorded in the outbox, oldest first. Each row must be
// routed as event.Record routes it (events exchange, the type as routing key and AMQP type, the
// event id as message id), which is checked here once for every test.
func (e *Env) Events(t testing.TB, typ string) []event.Event {
	t.Helper()
	var rows []struct {
		Exchange  string `db:"exchange"`
		Key       string `db:"routing_key"`
		MessageID string `db:"message_id"`
		Type      string `db:"type"`
		Body      []byte `db:"body"`
	}
	const q = `SELECT exchange, routing_key, message_id, type, body FROM outbox WHERE routing_key = $1 ORDER BY id`
	require.NoError(t, e.DB.Select(&rows, q, typ))
	out := make([]event.Event, len(rows))
	for i, r := range rows {
		ev, err := event.Decode(r.Body)
		require.NoError(t, err)
		require.Equal(t, event.Exchange, r.Exchange)
		require.Equal(t, typ, r.Type)
		require.Equal(t, typ, ev.Type)
		require.Equal(t, ev.ID, r.MessageID)
		out[i] = ev
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
