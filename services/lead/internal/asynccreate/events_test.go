package asynccreate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// submitter is the user message() names as the caller of every asynccreate.
const submitter = int64(9)

// jobEvents are the lead.job.failed events recorded about job id.
func jobEvents(t *testing.T, id string) []event.Event {
	t.Helper()
	var out []event.Event
	for _, ev := range env.Events(t, asynccreate.EventFailed) {
		var s asynccreate.Status
		require.NoError(t, json.Unmarshal(ev.Data, &s))
		if s.JobID == id {
			out = append(out, ev)
		}
	}
	return out
}

// jobStatus is the data of GET /v2/lead/job/:jobId as the job's submitter reads it.
func jobStatus(t *testing.T, id string) string {
	t.Helper()
	res := env.Do(t, http.MethodGet, "/v2/lead/job/"+id, nil, "X-User-Id", "9")
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	return string(res.Data)
}

func TestStoredJobsRecordLeadCreatedOncePerLead(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	a, bodyA := message(t, "v2", v2("+79161110101"))
	b, bodyB := message(t, "v1", map[string]any{"lead_type": "selection", "client_phone": "79161110101", "order_id": orderID,
		"order_code": orderCode, "messengerId": 1, "socialNetworkId": "2", "socialLogin": "s"})
	for range 2 {
		// The second round is a redelivery: nothing is stored, nothing announced again.
		assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack}, outcomes(w.Handle(context.Background(), deliveries(bodyA, bodyB))))
	}
	for _, id := range []string{a, b} {
		leads := leadsOfJob(t, id)
		require.Len(t, leads, 1)
		evs := env.LeadEvents(t, lead.EventCreated, leads[0].ID)
		require.Len(t, evs, 1, id)
		assert.Equal(t, int64(orderID), evs[0].OrderID)
		assert.Equal(t, submitter, evs[0].ActorUserID, "the user who submitted the job")
		assert.JSONEq(t, string(env.Detail(t, leads[0].ID)), string(evs[0].Data), "the lead as the detail route answers it")
		l := servicetest.LeadOf(t, evs[0])
		assert.Equal(t, []any{leads[0].ID, int64(1), "+79161110101"}, []any{l.ID, l.StatusID, l.Phone})
	}
	second := servicetest.LeadOf(t, env.LeadEvents(t, lead.EventCreated, leadsOfJob(t, b)[0].ID)[0])
	assert.True(t, second.IsSecondary, "the links of the batch are in the event")
}

func TestRefusedJobsRecordLeadJobFailed(t *testing.T) {
	env.Order(orderID, orderCode)
	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	final := v2("+79161110110")
	final["statusId"] = 4
	a, bodyA := message(t, "v2", final)
	b, bodyB := message(t, "v1", map[string]any{"lead_type": "straight", "client_phone": "12", "order_id": orderID, "order_code": orderCode})
	unknown := v2("12")
	unknown["orderId"] = 987640 // no such order in the cache, and the order service cannot say
	c, bodyC := message(t, "v2", unknown)
	for range 2 {
		assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack, mq.Ack}, outcomes(w.Handle(context.Background(), deliveries(bodyA, bodyB, bodyC))))
	}
	for id, order := range map[string]int64{a: orderID, b: orderID, c: 0} {
		evs := jobEvents(t, id)
		require.Len(t, evs, 1, "one event for a job refused twice: %s", id)
		assert.Equal(t, order, evs[0].OrderID, id)
		assert.Equal(t, submitter, evs[0].ActorUserID, id)
		assert.JSONEq(t, jobStatus(t, id), string(evs[0].Data), "the job as its status route answers it")
	}
	var s asynccreate.Status
	require.NoError(t, json.Unmarshal(jobEvents(t, b)[0].Data, &s))
	assert.Equal(t, asynccreate.StatusFailed, s.Status)
	require.NotNil(t, s.Reason)
	assert.Contains(t, *s.Reason, "client_phone: must be a phone number", "with its errors, in the job's names")
}

// A batch the database refuses is rolled back and written job by job: only what committed is
// announced, once.
func TestRolledBackBatchesAnnounceNothing(t *testing.T) {
	env.Order(orderID, orderCode)
	_, err := env.DB.Exec(`ALTER TABLE leads ADD CONSTRAINT test_refused_name CHECK (name IS DISTINCT FROM 'refused by the database')`)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = env.DB.Exec(`ALTER TABLE leads DROP CONSTRAINT test_refused_name`) })
	refused := v2("+79161110120")
	refused["name"] = "refused by the database"
	bad, bodyBad := message(t, "v2", refused)
	good, bodyGood := message(t, "v2", v2("+79161110121"))
	before := len(env.Events(t, lead.EventCreated))

	w := asynccreate.NewWorker(env.DB, env.Leads, zap.NewNop(), 200)
	results := w.Handle(context.Background(), deliveries(bodyBad, bodyGood))
	assert.Equal(t, []mq.Outcome{mq.DeadLetter, mq.Ack}, outcomes(results), "refused alone, it would be refused again")
	assert.Contains(t, results[0].Reason, "refused by the database")
	assert.Empty(t, leadsOfJob(t, bad))
	leads := leadsOfJob(t, good)
	require.Len(t, leads, 1)
	assert.Len(t, env.Events(t, lead.EventCreated), before+1, "only the lead that committed")
	assert.Len(t, env.LeadEvents(t, lead.EventCreated, leads[0].ID), 1)
	assert.Empty(t, jobEvents(t, bad), "a database refusal is no field error")
}
