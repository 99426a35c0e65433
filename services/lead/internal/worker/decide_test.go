package worker

import (
	"errors"
	"strings"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/job"
	"ccplatform/services/lead/internal/lead"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decisions Handle is made of, one delivery at a time, without a database or a broker.

func TestDecodeDeliveryReadsOnlyJobMessages(t *testing.T) {
	raw := []byte(jobSeeds[0])
	for _, typ := range []string{job.MessageType, ""} {
		it := fuzzWorker.decodeDelivery(mq.Delivery{Type: typ, Body: raw})
		assert.True(t, it.open(), "type %q", typ)
		assert.Equal(t, "0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e11", it.msg.JobID, "type %q", typ)
	}
	for _, typ := range []string{"lead.create.group", "lead.created"} {
		body := raw
		if typ == "lead.create.group" {
			body = mq.JoinGroup([][]byte{raw})
		}
		it := fuzzWorker.decodeDelivery(mq.Delivery{Type: typ, Body: body})
		assert.Equal(t, mq.Result{Outcome: mq.DeadLetter, Reason: `unknown message type "` + typ + `"`}, it.result)
		assert.False(t, it.open())
		assert.Empty(t, it.msg.JobID, "not read")
	}
}

func TestReadSettlesARepeatLikeItsFirstDelivery(t *testing.T) {
	a := jobSeeds[0]
	again := strings.ReplaceAll(a, "0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e11", "0B6F3C3E-6F55-8D8C-9C55-2F0F1F7C8E11")
	b := jobSeeds[2] // its body is refused: failed, and still written
	batch := []mq.Delivery{{Body: []byte(a)}, {Body: []byte(b)}, {Body: []byte(again)}, {Body: []byte(`{not json`)}, {Body: []byte(a)}}
	items := fuzzWorker.read(batch)
	require.Len(t, items, len(batch))
	assert.Equal(t, []*item{items[0], items[1]}, openItems(items))
	assert.NotEmpty(t, items[1].failed)
	assert.Same(t, items[0], items[2].repeat, "the same job id in another case")
	assert.Same(t, items[0], items[4].repeat)
	assert.Nil(t, items[3].repeat, "an unreadable delivery is nobody's repeat")

	items[0].result = mq.Result{Outcome: mq.Retry, Reason: "wait"}
	results := resultsOf(items)
	assert.Equal(t, []mq.Outcome{mq.Retry, mq.Ack, mq.Retry, mq.DeadLetter, mq.Retry},
		[]mq.Outcome{results[0].Outcome, results[1].Outcome, results[2].Outcome, results[3].Outcome, results[4].Outcome})
	assert.Equal(t, "wait", results[4].Reason)
	assert.Contains(t, results[3].Reason, "undecodable job")
}

func TestPreparedSettlesAJobByItsReferenceCheck(t *testing.T) {
	v1 := func() *item { return &item{msg: job.Message{JobID: "j", Version: "v1"}} }

	it := v1()
	it.prepared(lead.Prepared{Lead: lead.Lead{Phone: "+79161234567"}})
	require.NotNil(t, it.ready)
	assert.Equal(t, "+79161234567", it.ready.Phone)
	assert.True(t, it.open(), "to be written")

	it = v1()
	it.prepared(lead.Prepared{Err: apperr.Field("orderId", "no such order")})
	assert.Equal(t, "order_id: no such order", it.failed, "in the job's field names")
	assert.Nil(t, it.ready)
	assert.True(t, it.open(), "its failure is written")

	it = v1()
	it.prepared(lead.Prepared{Err: apperr.Unavailablef("order service unavailable")})
	assert.Equal(t, mq.Result{Outcome: mq.Retry, Reason: "order service unavailable"}, it.result)
	assert.Empty(t, it.failed)
	assert.False(t, it.open(), "it waits for the next delivery")
}

func TestWrittenSettlesAJobByItsWrite(t *testing.T) {
	assert.Equal(t, mq.Result{Outcome: mq.Ack}, written(nil))
	for _, err := range []error{errors.New("connection reset by peer"), &pq.Error{Code: "40001"}, &pq.Error{Code: "23505"}} {
		assert.Equal(t, mq.Retry, written(err).Outcome, err)
		assert.Equal(t, err.Error(), written(err).Reason)
	}
	for _, err := range []error{&pq.Error{Code: "23514", Message: "check violated"}, &pq.Error{Code: "22001"}} {
		assert.Equal(t, mq.Fail, written(err).Outcome, err)
	}
}
