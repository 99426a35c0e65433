package lead

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/event"
	"ccplatform/pkg/walrelay"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Event types of leads on the events exchange, each its own routing key (docs/events.md). They are
// recorded by the store, in the transaction of the change they announce, so that every path that
// writes leads (sync routes, async worker, bulk import, call results) announces alike. They are
// written into the WAL (pkg/walrelay) under EventsPrefix, not into a table: a create pays one WAL
// record for its event, with nothing to delete or vacuum after.
const (
	EventCreated       = "lead.created"
	EventUpdated       = "lead.updated"
	EventStatusChanged = "lead.status_changed"
)

// eventOf is an event of type typ about l as the detail route answers it. Phones are not masked:
// the consumers that forward events apply the access rules of whomever they forward them to.
// occurredAt is l's updatedAt, the instant of the change as the database stamped it.
func eventOf(typ string, l Lead, actor *int64) (event.Event, error) {
	ev, err := event.New(typ, l.OrderID, ViewOf(l))
	if err != nil {
		return event.Event{}, err
	}
	ev.OccurredAt = apitime.String(l.UpdatedAt)
	if actor != nil {
		ev.ActorUserID = *actor
	}
	return ev, nil
}

// createdTemplate is lead.created of l before it is stored, for Create's statement to complete:
// the event's id, its envelope without occurredAt and data, and l's API form, whose id, link,
// times and doNotCall the statement sets as stored.
func createdTemplate(l Lead) (id string, head, data []byte, err error) {
	ev, err := eventOf(EventCreated, l, l.CreatedBy)
	if err != nil {
		return "", nil, nil, err
	}
	data, ev.Data = ev.Data, nil
	if head, err = json.Marshal(ev); err != nil {
		return "", nil, nil, fmt.Errorf("encode %s: %w", EventCreated, err)
	}
	return ev.ID, head, data, nil
}

// statusChangedOf is lead.status_changed of l, whose status was previous before the change.
func statusChangedOf(l Lead, previous int64, actor *int64) (event.Event, error) {
	ev, err := eventOf(EventStatusChanged, l, actor)
	if err != nil {
		return event.Event{}, err
	}
	ev.PreviousStatusID = &previous
	return ev, nil
}

// The lead service's events in the WAL: the prefix of their messages and the publication its
// relay reads them through. Both the publication and the slot (named after the database,
// walrelay.SlotName of EventsPrefix) are made at start by wiring.OpenDB, the publication first.
const (
	EventsPrefix      = "lead_events"
	EventsPublication = "lead_events"
)

// Emit records evs inside tx with one statement, whatever their number (a worker batch or an
// import chunk pays one round trip): each is published on the events exchange, its type as
// routing key, if and only if tx commits. leads[i] is the lead evs[i] is about (0 for none, nil
// for all none): the relay publishes one lead's events in commit order.
func Emit(ctx context.Context, tx *sqlx.Tx, evs []event.Event, leads []int64) error {
	if len(evs) == 0 {
		return nil
	}
	msgs := make([]walrelay.Message, len(evs))
	for i, ev := range evs {
		msg, err := ev.Message()
		if err != nil {
			return err
		}
		msgs[i] = walrelay.Message{Exchange: event.Exchange, Key: ev.Type, Msg: msg}
		if i < len(leads) && leads[i] != 0 {
			msgs[i].Order = strconv.FormatInt(leads[i], 10)
		}
	}
	if err := walrelay.Emit(ctx, tx, EventsPrefix, msgs...); err != nil {
		return fmt.Errorf("record %d lead events: %w", len(evs), err)
	}
	return nil
}

// recordCreated records lead.created inside tx for each of leads, as stored (ids, links and times
// set); each names the lead's creator as its actor.
func recordCreated(ctx context.Context, tx *sqlx.Tx, leads []Lead) error {
	evs, ids := make([]event.Event, len(leads)), make([]int64, len(leads))
	for i, l := range leads {
		ev, err := eventOf(EventCreated, l, l.CreatedBy)
		if err != nil {
			return err
		}
		evs[i], ids[i] = ev, l.ID
	}
	return Emit(ctx, tx, evs, ids)
}

// updateEvents are the events of a change of a lead from before to after made by actor:
// lead.updated when a field's value changed, and lead.status_changed besides when the status did.
func updateEvents(before, after Lead, actor *int64) ([]event.Event, error) {
	changed, err := changedFields(ViewOf(before), ViewOf(after))
	if err != nil || len(changed) == 0 {
		return nil, err
	}
	updated, err := eventOf(EventUpdated, after, actor)
	if err != nil {
		return nil, err
	}
	updated.ChangedFields = changed
	evs := []event.Event{updated}
	if before.StatusID != after.StatusID {
		ev, err := statusChangedOf(after, before.StatusID, actor)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// changedFields names, sorted, the members of the wire form whose values differ, so the names are
// the API's by construction. updatedAt and doNotCall are left out: the store moves the one on
// every write, and the other follows the do-not-call list, not the lead.
func changedFields(before, after View) ([]string, error) {
	old, err := members(before)
	if err != nil {
		return nil, err
	}
	now, err := members(after)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, v := range now {
		if name != "updatedAt" && name != "doNotCall" && !bytes.Equal(old[name], v) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// members is v's JSON object by member name.
func members(v View) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode lead %d: %w", v.ID, err)
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode lead %d: %w", v.ID, err)
	}
	return m, nil
}

// RecordStatusChanges records lead.status_changed inside tx for each lead of previous (lead id →
// its status before a change tx made), with the lead as tx sees it now. The platform made these
// changes (call results): the events name no actor.
func RecordStatusChanges(ctx context.Context, tx *sqlx.Tx, previous map[int64]int64) error {
	if len(previous) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(previous))
	for id := range previous {
		ids = append(ids, id)
	}
	var leads []Lead
	q := `SELECT ` + columns + `, ` + doNotCall + ` FROM leads WHERE id = ANY($1) ORDER BY id`
	if err := tx.SelectContext(ctx, &leads, q, pq.Int64Array(ids)); err != nil {
		return fmt.Errorf("read leads whose status changed: %w", err)
	}
	evs, ids := make([]event.Event, len(leads)), make([]int64, len(leads))
	for i, l := range leads {
		ev, err := statusChangedOf(l, previous[l.ID], nil)
		if err != nil {
			return err
		}
		evs[i], ids[i] = ev, l.ID
	}
	return Emit(ctx, tx, evs, ids)
}
