// Package optional distinguishes, in a JSON body, a field that was not sent from one sent as null
// and one sent with a value: partial updates keep unsent fields and clear the ones sent as null.
package optional

import (
	"bytes"
	"encoding/json"
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
	return json.Unmarshal(b, &v.V)
}

// MarshalJSON writes null for absent and null values.
func (v Value[T]) MarshalJSON() ([]byte, error) {
	if !v.Present() {
		return []byte("null"), nil
	}
	return json.Marshal(v.V)
}
