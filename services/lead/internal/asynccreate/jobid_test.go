package asynccreate

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJobIDsSignAndVerify(t *testing.T) {
	ids := NewIDs("secret")
	seen := map[uuid.UUID]bool{}
	for range 1000 {
		id := ids.New(0)
		require.False(t, seen[id], "ids repeat")
		seen[id] = true
		assert.Equal(t, uuid.Version(8), id.Version())
		assert.Equal(t, uuid.RFC4122, id.Variant())
		assert.True(t, ids.Verify(id, 0))
		parsed, err := Parse(id.String())
		require.NoError(t, err)
		assert.Equal(t, id, parsed)
	}
	id := ids.New(0)
	assert.False(t, NewIDs("other secret").Verify(id, 0), "another secret")
	for i := range 16 {
		tampered := id
		tampered[i] ^= 0x01
		assert.False(t, ids.Verify(tampered, 0), "byte %d changed", i)
	}
	assert.False(t, ids.Verify(uuid.New(), 0), "a random version 4 UUID")
	v8 := uuid.New()
	v8[6] = v8[6]&0x0f | 0x80
	assert.False(t, ids.Verify(v8, 0), "a random version 8 UUID")
}

// A job's id verifies for the user who created it only: another user cannot even learn it exists.
func TestJobIDsBelongToTheirCreator(t *testing.T) {
	ids := NewIDs("secret")
	mine := ids.New(7)
	assert.True(t, ids.Verify(mine, 7))
	assert.False(t, ids.Verify(mine, 8), "another user")
	assert.False(t, ids.Verify(mine, 0), "no user")
	assert.False(t, ids.Verify(ids.New(0), 7), "a job without a user is not the user's")
}

func TestParseJobID(t *testing.T) {
	for _, raw := range []string{"", "x", "6f1c2a8e1b2c4d3e8f40123456789abc", "{6f1c2a8e-1b2c-4d3e-8f40-123456789abc}", "urn:uuid:6f1c2a8e-1b2c-4d3e-8f40-123456789abc"} {
		_, err := Parse(raw)
		assert.Error(t, err, raw)
	}
}

func TestMessageWireForm(t *testing.T) {
	uid := int64(7)
	b, err := json.Marshal(Message{JobID: "j", Version: "v2", CreateMethod: "api_v2_async", Body: json.RawMessage(`{"a":1}`), CallerUserID: &uid})
	require.NoError(t, err)
	assert.JSONEq(t, `{"jobId":"j","version":"v2","createMethod":"api_v2_async","body":{"a":1},"callerUserId":7}`, string(b))
}

func TestNullArrays(t *testing.T) {
	s := "a\"b\\c"
	v, err := pqNullStrings([]*string{&s, nil}).Value()
	require.NoError(t, err)
	assert.Equal(t, `{"a\"b\\c",NULL}`, v)
	n := int64(5)
	v, err = pqNullInts([]*int64{nil, &n}).Value()
	require.NoError(t, err)
	assert.Equal(t, `{NULL,"5"}`, v)
}
