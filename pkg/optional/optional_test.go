package optional

import (
	"encoding/json"
	"errors"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
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

// The bodies are decoded with JSON v2 (pkg/web); a type error inside a Value names its place.
func TestTypeErrorNamesTheField(t *testing.T) {
	var b body
	err := jsonv2.Unmarshal([]byte(`{"limit":"ten"}`), &b)
	var se *jsonv2.SemanticError
	require.True(t, errors.As(err, &se), "got %T %v", err, err)
	assert.Equal(t, "/limit", string(se.JSONPointer))
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
	err := jsonv2.Unmarshal([]byte(`{"inner":{"count":true}}`), &n)
	var se *jsonv2.SemanticError
	require.True(t, errors.As(err, &se), "got %T %v", err, err)
	assert.Equal(t, "/inner/count", string(se.JSONPointer))
	assert.Equal(t, "int", se.GoType.String())

	n = nested{}
	err = jsonv2.Unmarshal([]byte(`{"items":[{"price":"x"}]}`), &n)
	require.True(t, errors.As(err, &se), "got %T %v", err, err)
	assert.Equal(t, "/items/0/price", string(se.JSONPointer))
}

func TestTypeErrorInsideValueOfArray(t *testing.T) {
	var b body
	err := jsonv2.Unmarshal([]byte(`{"tags":["a",2]}`), &b)
	var se *jsonv2.SemanticError
	require.True(t, errors.As(err, &se), "got %T %v", err, err)
	assert.Equal(t, "/tags/1", string(se.JSONPointer))
	assert.Equal(t, "string", se.GoType.String())
}

func TestMemberNamesInsideAValueMatchExactly(t *testing.T) {
	var v Value[struct {
		Count int `json:"count"`
	}]
	require.NoError(t, v.UnmarshalJSON([]byte(`{"COUNT":3}`)))
	assert.Zero(t, v.V.Count, "a member in another case is an unknown member")
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

// TestPlainDecodingMatchesEncodingJSON checks the shortcut of UnmarshalJSON for strings and integers
// against JSON v2 (the bodies' decoder) and for raw JSON against encoding/json, over literals of every
// kind: whatever the shortcut decodes must be what the decoder decodes, and the rest (escapes, invalid UTF-8, overflows, floats,
// leading zeros, whitespace, invalid JSON) must be left to json.Unmarshal.
func TestPlainDecodingMatchesEncodingJSON(t *testing.T) {
	literals := []string{
		`""`, `"a"`, `"Bench client"`, `"Иван Петров"`, `"日本語"`, `"emoji 🙂"`, `"tab\there"`,
		`"quote\"inside"`, `"back\\slash"`, `"\u0041"`, `"\ud83d\ude42"`, "\"raw\ttab\"", "\"new\nline\"",
		"\"bad \xff utf8\"", "\"cut \xd0\"", `"unterminated`, `"`, `"a"b"`, `" spaced "`, ` "lead"`, `"trail" `,
		`"<html>&amp;"`, "\"\u2028\"", `"+79161234567"`, `"1"`,
		`0`, `-0`, `1`, `-1`, `42`, `007`, `-007`, `00`, `9223372036854775807`, `9223372036854775808`,
		`-9223372036854775808`, `-9223372036854775809`, `12345678901234567890`, `1.0`, `1e3`, `-`, `+1`,
		`1 `, ` 1`, `0x10`, `--1`, `1-`,
		`null`, ` null `, `true`, `false`, `{}`, `[]`, `{"a":1}`, `[1,"x",null]`, ` {"a": [1, 2]} `,
		`{"a":}`, `[1,]`, `{`, `nul`, ``, ` `, `{"a":"\u00e9"}`, "{\"a\":\"\xff\"}",
	}
	for _, lit := range literals {
		b := []byte(lit)

		var wantS string
		wantErr := jsonv2.Unmarshal(b, &wantS)
		var gotS string
		if decodePlain(b, &gotS) {
			assert.NoError(t, wantErr, "string %q", lit)
			assert.Equal(t, wantS, gotS, "string %q", lit)
		}
		var vs Value[string]
		gotErr := vs.UnmarshalJSON(b)
		assert.Equal(t, wantErr == nil, gotErr == nil, "string %q: %v / %v", lit, wantErr, gotErr)
		if wantErr == nil && !vs.Null {
			assert.Equal(t, wantS, vs.V, "string %q", lit)
		}

		var wantN int64
		wantErr = jsonv2.Unmarshal(b, &wantN)
		var gotN int64
		if decodePlain(b, &gotN) {
			assert.NoError(t, wantErr, "int64 %q", lit)
			assert.Equal(t, wantN, gotN, "int64 %q", lit)
		}
		var vn Value[int64]
		gotErr = vn.UnmarshalJSON(b)
		assert.Equal(t, wantErr == nil, gotErr == nil, "int64 %q: %v / %v", lit, wantErr, gotErr)
		if wantErr == nil && !vn.Null {
			assert.Equal(t, wantN, vn.V, "int64 %q", lit)
		}

		var wantR json.RawMessage
		wantErr = json.Unmarshal(b, &wantR)
		var gotR json.RawMessage
		if decodePlain(b, &gotR) {
			assert.NoError(t, wantErr, "raw %q", lit)
			assert.Equal(t, string(wantR), string(gotR), "raw %q", lit)
		}
	}
}

func TestPlainRawMessageIsACopy(t *testing.T) {
	b := []byte(`{"a":1}`)
	var v Value[json.RawMessage]
	require.NoError(t, v.UnmarshalJSON(b))
	b[2] = 'x'
	assert.Equal(t, `{"a":1}`, string(v.V))
}

func TestSet(t *testing.T) {
	name := "kept"
	Set(&name, Value[string]{})
	Set(&name, Null[string]())
	assert.Equal(t, "kept", name, "absent and null keep a field that cannot be cleared")
	Set(&name, Of("new"))
	assert.Equal(t, "new", name)

	limit := new(int64)
	*limit = 5
	SetPtr(&limit, Value[int64]{})
	assert.Equal(t, int64(5), *limit, "absent keeps")
	SetPtr(&limit, Of[int64](7))
	assert.Equal(t, int64(7), *limit)
	SetPtr(&limit, Null[int64]())
	assert.Nil(t, limit, "null clears")
}

func TestIsNullTellsNullFromAbsentAndValue(t *testing.T) {
	var in struct {
		A Value[string] `json:"a"`
		B Value[string] `json:"b"`
		C Value[string] `json:"c"`
	}
	if err := json.Unmarshal([]byte(`{"a":null,"b":"x"}`), &in); err != nil {
		t.Fatal(err)
	}
	if !in.A.IsNull() || in.B.IsNull() || in.C.IsNull() {
		t.Fatalf("IsNull: null %v, value %v, absent %v", in.A.IsNull(), in.B.IsNull(), in.C.IsNull())
	}
}
