// Package optional distinguishes, in a JSON body, a field that was not sent from one sent as null
// and one sent with a value: partial updates keep unsent fields and clear the ones sent as null.
package optional

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// Value is a tri-state field: absent (Set false), null (Set and Null), or a value.
type Value[T any] struct {
	Set  bool
	Null bool
	V    T
}

// Of is a present, non-null value.
func Of[T any](v T) Value[T] { return Value[T]{Set: true, V: v} }

// Null is a field sent as null.
func Null[T any]() Value[T] { return Value[T]{Set: true, Null: true} }

// Present reports a field sent with a non-null value.
func (v Value[T]) Present() bool { return v.Set && !v.Null }

// IsNull reports a field sent as null.
func (v Value[T]) IsNull() bool { return v.Set && v.Null }

// Or returns the value when present, def otherwise.
func (v Value[T]) Or(def T) T {
	if v.Present() {
		return v.V
	}
	return def
}

// Ptr is nil for absent or null, else a pointer to a copy of the value.
func (v Value[T]) Ptr() *T {
	if !v.Present() {
		return nil
	}
	x := v.V
	return &x
}

// Set writes v onto *dst when it has a value; absent and null keep *dst: the partial update of a
// field that cannot be cleared.
func Set[T any](dst *T, v Value[T]) {
	if v.Present() {
		*dst = v.V
	}
}

// SetPtr writes v onto *dst when it was sent: a value sets it, null clears it; absent keeps it.
func SetPtr[T any](dst **T, v Value[T]) {
	if v.Set {
		*dst = v.Ptr()
	}
}

// UnmarshalJSON is only called by encoding/json for keys that are present, which is what makes
// "absent" observable.
func (v *Value[T]) UnmarshalJSON(b []byte) error {
	v.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		v.Null = true
		var zero T
		v.V = zero
		return nil
	}
	v.Null = false
	if decodePlain(b, &v.V) {
		return nil
	}
	// The body's own decoder rules (exact member names, no duplicates, valid UTF-8) hold inside
	// optional values too, so nested objects decode with JSON v2 like the body around them.
	return jsonv2.Unmarshal(b, &v.V)
}

// decodePlain decodes the commonest literals of request bodies without json.Unmarshal, which
// validates b again and sets up a decoder for every field (a body's fields are mostly Values):
// a string without escapes, a plain integer, raw JSON. It reports false for anything else, and
// for every input whose decoding could fail, so that json.Unmarshal decodes those and returns
// its own errors; where it reports true, the result is the one json.Unmarshal gives.
func decodePlain(b []byte, dst any) bool {
	switch p := dst.(type) {
	case *string:
		if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
			return false
		}
		in := b[1 : len(b)-1]
		for _, c := range in {
			// Escapes and control characters need unquoting or are errors; bytes of 0x80 and
			// above are kept only as valid UTF-8 (checked below), as json.Unmarshal keeps them.
			if c == '\\' || c == '"' || c < ' ' {
				return false
			}
		}
		if !utf8.Valid(in) {
			return false
		}
		*p = string(in)
		return true
	case *int64:
		digits := b
		if len(digits) > 0 && digits[0] == '-' {
			digits = digits[1:]
		}
		// JSON allows no leading zero; strconv would, so such input goes to json.Unmarshal.
		if len(digits) == 0 || len(digits) > 19 || (digits[0] == '0' && len(digits) > 1) {
			return false
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return false
			}
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return false
		}
		*p = n
		return true
	case *json.RawMessage:
		// json.Unmarshal hands RawMessage the value without the whitespace around it.
		if len(b) == 0 || isSpace(b[0]) || isSpace(b[len(b)-1]) || !json.Valid(b) {
			return false
		}
		*p = append((*p)[0:0], b...)
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// MarshalJSON writes null for absent and null values.
func (v Value[T]) MarshalJSON() ([]byte, error) {
	if !v.Present() {
		return []byte("null"), nil
	}
	return json.Marshal(v.V)
}
