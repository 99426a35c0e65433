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

type nested struct {
	Inner struct {
		Count Value[int] `json:"count"`
	} `json:"inner"`
	Items []struct {
		Price Value[float64] `json:"price"`
	} `json:"items"`
}

func TestTypeErrorNamesNestedFields(t *testing.T) {
	var n nested
	err := json.Unmarshal([]byte(`{"inner":{"count":true}}`), &n)
	var te *json.UnmarshalTypeError
	require.True(t, errors.As(err, &te), "got %T %v", err, err)
	assert.Equal(t, "inner.count", te.Field)
	assert.Equal(t, "int", te.Type.String())

	n = nested{}
	err = json.Unmarshal([]byte(`{"items":[{"price":"x"}]}`), &n)
	require.True(t, errors.As(err, &te), "got %T %v", err, err)
	assert.Equal(t, "items.price", te.Field)
}

func TestTypeErrorInsideValueOfArray(t *testing.T) {
	var b body
	err := json.Unmarshal([]byte(`{"tags":["a",2]}`), &b)
	var te *json.UnmarshalTypeError
	require.True(t, errors.As(err, &te), "got %T %v", err, err)
	assert.Equal(t, "tags", te.Field)
	assert.Equal(t, "string", te.Type.String())
}

func TestValueStates(t *testing.T) {
	var absent Value[int]
	assert.False(t, absent.Set)
	assert.False(t, absent.Present())
	assert.Nil(t, absent.Ptr())
	assert.Equal(t, 9, absent.Or(9))

	null := Null[int]()
	assert.True(t, null.Set)
	assert.True(t, null.Null)
	assert.False(t, null.Present())
	assert.Equal(t, 9, null.Or(9))

	v := Of(4)
	assert.True(t, v.Present())
	assert.Equal(t, 4, v.Or(9))
	p := v.Ptr()
	require.NotNil(t, p)
	*p = 5
	assert.Equal(t, 4, v.V, "Ptr returns a copy")
}

func TestNullResetsAnEarlierValue(t *testing.T) {
	b := body{Limit: Of(3)}
	require.NoError(t, json.Unmarshal([]byte(`{"limit": null }`), &b))
	assert.True(t, b.Limit.Null)
	assert.Equal(t, 0, b.Limit.V)

	require.NoError(t, json.Unmarshal([]byte(`{"limit":7}`), &b))
	assert.False(t, b.Limit.Null)
	assert.Equal(t, 7, b.Limit.V)
}

func TestMarshalRoundTrip(t *testing.T) {
	in := body{Title: Of("x"), Limit: Null[int](), Tags: Of([]string{"a", "b"})}
	out, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"title":"x","limit":null,"tags":["a","b"]}`, string(out))
	var back body
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, in, back)
}
