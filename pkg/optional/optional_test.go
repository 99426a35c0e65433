package optional

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type body struct {
	Title Value[string]   `json:"title"`
	Limit Value[int]      `json:"limit"`
	Tags  Value[[]string] `json:"tags"`
}

func TestAbsentNullAndValueAreDistinct(t *testing.T) {
	var b body
	require.NoError(t, json.Unmarshal([]byte(`{"limit":null,"tags":["a"]}`), &b))
	assert.False(t, b.Title.Set, "absent")
	assert.True(t, b.Limit.Set)
	assert.True(t, b.Limit.Null, "null")
	assert.False(t, b.Limit.Present())
	assert.True(t, b.Tags.Present())
	assert.Equal(t, []string{"a"}, b.Tags.V)
	assert.Nil(t, b.Limit.Ptr())
	assert.Equal(t, 5, b.Limit.Or(5))
}

func TestTypeErrorNamesTheField(t *testing.T) {
	var b body
	err := json.Unmarshal([]byte(`{"limit":"ten"}`), &b)
	var te *json.UnmarshalTypeError
	require.True(t, errors.As(err, &te), "got %T %v", err, err)
	assert.Equal(t, "limit", te.Field)
}

func TestMarshal(t *testing.T) {
	out, err := json.Marshal(struct {
		A Value[int] `json:"a"`
		B Value[int] `json:"b"`
	}{A: Of(3)})
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":3,"b":null}`, string(out))
}
