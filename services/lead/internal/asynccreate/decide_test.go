package asynccreate

import (
	"strings"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/lead"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The decisions Handle is made of, one delivery at a time, without a database or a broker.

func TestDecodeDeliveryReadsOnlyJobMessages(t *testing.T) {
	raw := []byte(jobSeeds[0])
	for _, typ := range []string{MessageType, ""} {
		items, err := fuzzWorker.decodeDelivery(mq.Delivery{Type: typ, Body: raw})
		require.NoError(t, err, "type %q", typ)
		require.Len(t, items, 1)
		assert.Equal(t, "0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e11", items[0].msg.JobID, "type %q", typ)
	}
	for _, typ := range []string{"lead.create.group", "lead.created"} {
		body := raw
		if typ == "lead.create.group" {
			body = mq.JoinGroup([][]byte{raw})
		}
		items, err := fuzzWorker.decodeDelivery(mq.Delivery{Type: typ, Body: body})
		assert.EqualError(t, err, `unknown message type "`+typ+`"`)
		assert.Empty(t, items, "not read")
	}
}

func TestDecodeNamesAJobByItsCanonicalID(t *testing.T) {
	// The pipeline settles a second delivery of a job in a batch as the first by this key.
	a := jobSeeds[0]
	again := strings.ReplaceAll(a, "0b6f3c3e-6f55-8d8c-9c55-2f0f1f7c8e11", "0B6F3C3E-6F55-8D8C-9C55-2F0F1F7C8E11")
	one, err := fuzzWorker.decode([]byte(a))
	require.NoError(t, err)
	two, err := fuzzWorker.decode([]byte(again))
	require.NoError(t, err)
	assert.Equal(t, fuzzWorker.pipe.Key(one), fuzzWorker.pipe.Key(two))

	refused, err := fuzzWorker.decode([]byte(jobSeeds[2]))
	require.NoError(t, err, "a body that can never make a lead is a failed job, still written")
	assert.NotEmpty(t, refused.failed)
	_, err = fuzzWorker.decode([]byte(`{not json`))
	assert.ErrorContains(t, err, "undecodable job")
}

func TestPreparedSettlesAJobByItsReferenceCheck(t *testing.T) {
	v1 := func() *item { return &item{msg: Message{JobID: "j", Version: "v1"}} }

	it := v1()
	require.NoError(t, it.prepared(lead.Prepared{Lead: lead.Lead{Phone: "+79161234567"}}))
	require.NotNil(t, it.ready)
	assert.Equal(t, "+79161234567", it.ready.Phone)

	it = v1()
	require.NoError(t, it.prepared(lead.Prepared{Err: apperr.Field("orderId", "no such order")}), "its failure is written")
	assert.Equal(t, "order_id: no such order", it.failed, "in the job's field names")
	assert.Nil(t, it.ready)

	it = v1()
	err := it.prepared(lead.Prepared{Err: apperr.Unavailablef("order service unavailable")})
	assert.EqualError(t, err, "order service unavailable", "it waits for the next delivery")
	assert.Empty(t, it.failed)
}
