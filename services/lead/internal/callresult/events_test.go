package callresult_test

import (
	"context"
	"testing"

	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCallsThatChangeTheStatusRecordLeadStatusChanged(t *testing.T) {
	o := newOrder(t)
	c := consumer()
	called, kept := newLead(t, o, nil), newLead(t, o, nil)
	batch := deliveries(t, finished(called, o, callresult.OutcomeNoAnswer, utc(23, 10, 0)),
		finished(kept, o, callresult.OutcomeAnswered, utc(23, 10, 0)))
	for range 2 {
		// The second round is a redelivery: nothing changes, nothing is announced again.
		assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack}, outcomes(c.Handle(context.Background(), batch)))
	}
	evs := env.LeadEvents(t, lead.EventStatusChanged, called)
	require.Len(t, evs, 1)
	ev := evs[0]
	require.NotNil(t, ev.PreviousStatusID)
	assert.Equal(t, int64(statusNew), *ev.PreviousStatusID)
	assert.Equal(t, o.ID, ev.OrderID)
	assert.Zero(t, ev.ActorUserID, "a call result is the platform's change")
	assert.Empty(t, ev.ChangedFields)
	assert.JSONEq(t, string(env.Detail(t, called)), string(ev.Data), "the lead after the call, as the detail route answers it")
	l := servicetest.LeadOf(t, ev)
	assert.Equal(t, []any{called, int64(statusNoAnswer)}, []any{l.ID, l.StatusID})
	assert.NotEmpty(t, l.Phone)

	assert.Empty(t, env.LeadEvents(t, lead.EventStatusChanged, kept), "an answered new lead stays new")
	assert.Empty(t, env.LeadEvents(t, lead.EventUpdated, called), "call results announce status changes only")
}

func TestABatchThatMovesTheStatusAwayAndBackAnnouncesNothing(t *testing.T) {
	o := newOrder(t)
	c := consumer()
	called := newLead(t, o, nil)
	c.Handle(context.Background(), deliveries(t, finished(called, o, callresult.OutcomeNoAnswer, utc(23, 10, 0))))
	require.Len(t, env.LeadEvents(t, lead.EventStatusChanged, called), 1)
	// Busy, then no answer again: the batch leaves the status where it found it.
	batch := deliveries(t, finished(called, o, callresult.OutcomeBusy, utc(23, 10, 40)),
		finished(called, o, callresult.OutcomeNoAnswer, utc(23, 11, 20)))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack}, outcomes(c.Handle(context.Background(), batch)))
	assert.Equal(t, 3, stateOf(t, called).Attempts)
	assert.Len(t, env.LeadEvents(t, lead.EventStatusChanged, called), 1, "only net changes are announced")
}

func TestARolledBackCallResultAnnouncesNothing(t *testing.T) {
	o := newOrder(t)
	called := newLead(t, o, nil)
	ev := finished(called, o, callresult.OutcomeNoAnswer, utc(23, 10, 0))
	ev["callId"] = 999999990
	// The results are recorded after the lead's update and its event: refusing them rolls both back.
	_, err := env.DB.Exec(`ALTER TABLE lead_call_results ADD CONSTRAINT test_refused CHECK (call_id <> 999999990) NOT VALID`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = env.DB.Exec(`ALTER TABLE lead_call_results DROP CONSTRAINT test_refused`) })
	results := consumer().Handle(context.Background(), deliveries(t, ev))
	assert.NotEqual(t, mq.Ack, results[0].Outcome)
	assert.Equal(t, int64(statusNew), stateOf(t, called).StatusID)
	assert.Empty(t, env.LeadEvents(t, lead.EventStatusChanged, called))
}
