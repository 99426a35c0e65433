// Package customfield is a catalog of custom fields that a service's records can carry values for
// (each service keeps its own, in its own schema), and the rules a value must follow to match its
// field's type.
package customfield

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"

	"github.com/lib/pq"
)

// The field types (docs/architecture.md, "Custom fields").
const (
	TypeString      = "string"
	TypeInteger     = "integer"
	TypeNumber      = "number"
	TypeBoolean     = "boolean"
	TypeDate        = "date"
	TypeSelect      = "select"
	TypeMultiselect = "multiselect"
)

// Types lists every type, in the order the docs give them.
var Types = []string{TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeDate, TypeSelect, TypeMultiselect}

// Field is one catalog entry. Options are the allowed values of select and multiselect fields and
// empty for the other types.
type Field struct {
	ID      int64          `json:"id" db:"id"`
	Code    string         `json:"code" db:"code"`
	Name    string         `json:"name" db:"name"`
	Type    string         `json:"type" db:"type"`
	Options pq.StringArray `json:"options" db:"options"`
}

// Limits of a definition; they keep the catalog readable in admin tools. An option is a label
// like a name; a select of more than maxOptions choices is a catalog of its own.
const (
	maxCodeLen   = 100
	maxNameLen   = 255
	maxOptions   = 1000
	maxOptionLen = 255
)

var codePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Definition is the body of an upsert.
type Definition struct {
	Code    string   `json:"code"`
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Options []string `json:"options"`
}

// Validate checks a definition and returns the field it describes (without id).
func (d Definition) Validate() (Field, error) {
	fe := apperr.FieldErrors{}
	switch {
	case d.Code == "":
		fe.Add("code", "is required")
	case utf8.RuneCountInString(d.Code) > maxCodeLen:
		fe.Addf("code", "must be at most %d characters", maxCodeLen)
	case !codePattern.MatchString(d.Code):
		fe.Add("code", "may contain only letters a-z, A-Z, digits and - _ .")
	}
	name := strings.TrimSpace(d.Name)
	switch {
	case name == "":
		fe.Add("name", "is required")
	case utf8.RuneCountInString(name) > maxNameLen:
		fe.Addf("name", "must be at most %d characters", maxNameLen)
	}
	if !slices.Contains(Types, d.Type) {
		fe.Add("type", "must be one of: "+strings.Join(Types, ", "))
	}
	options := pq.StringArray{}
	if d.Type == TypeSelect || d.Type == TypeMultiselect {
		if len(d.Options) == 0 {
			fe.Add("options", "must not be empty for a "+d.Type+" field")
		}
		if len(d.Options) > maxOptions {
			fe.Addf("options", "must have at most %d values", maxOptions)
			d.Options = nil
		}
		for _, o := range d.Options {
			o = strings.TrimSpace(o)
			switch {
			case o == "":
				fe.Add("options", "must not contain empty values")
			case utf8.RuneCountInString(o) > maxOptionLen:
				fe.Addf("options", "must hold values of at most %d characters", maxOptionLen)
			case d.Type == TypeMultiselect && strings.Contains(o, ","):
				// A multiselect value is a comma-separated string, so an option cannot hold a comma.
				fe.Add("options", "must not contain commas in a multiselect field")
			case slices.Contains(options, o):
				fe.Add("options", "must not repeat a value")
			}
			options = append(options, o)
		}
	} else if len(d.Options) > 0 {
		fe.Add("options", "must be empty for a "+d.Type+" field")
	}
	if err := fe.Err(); err != nil {
		return Field{}, err
	}
	return Field{Code: d.Code, Name: name, Type: d.Type, Options: options}, nil
}

// CheckValues matches every sent value (values, by custom-field id) with its field in fields and
// replaces it by the checked value (CheckValue); an unknown id or a refused value is a problem of
// customValues.<id>. owner names the catalog in the message: "no lead custom field has id 3".
func CheckValues(values map[int64]json.RawMessage, fields map[int64]Field, owner string, fe apperr.FieldErrors) {
	for id, raw := range values {
		name := fmt.Sprintf("customValues.%d", id)
		f, ok := fields[id]
		if !ok {
			fe.Addf(name, "no %s custom field has id %d", owner, id)
			continue
		}
		v, rule := f.CheckValue(raw)
		if rule != "" {
			fe.Add(name, rule)
			continue
		}
		values[id] = v
	}
}

// CheckValue checks that raw (one JSON value) matches the field's type and returns the value to
// store: the same JSON, except that a multiselect is normalized to "a,b" without spaces or
// repeats. When the value does not match, rule says why and the value is nil.
func (f Field) CheckValue(raw json.RawMessage) (value json.RawMessage, rule string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, "must not be null"
	}
	switch f.Type {
	case TypeString:
		s, ok := asString(raw)
		if !ok {
			return nil, "must be a string"
		}
		if utf8.RuneCountInString(s) > MaxStringValue {
			return nil, fmt.Sprintf("must be at most %d characters", MaxStringValue)
		}
	case TypeInteger:
		var n json.Number
		if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
			return nil, "must be an integer"
		}
		if _, err := n.Int64(); err != nil {
			return nil, "must be an integer"
		}
	case TypeNumber:
		var n json.Number
		if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
			return nil, "must be a number"
		}
		// JSON numbers have no bound of their own: a 100,000-digit one, or 1e999, would be stored
		// as sent and break every reader that takes it for a double.
		if len(raw) > maxNumberLen {
			return nil, fmt.Sprintf("must be a number of at most %d characters", maxNumberLen)
		}
		if x, err := n.Float64(); err != nil || math.IsInf(x, 0) {
			return nil, "must be a number within the range of a double"
		}
	case TypeBoolean:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, "must be a boolean"
		}
	case TypeDate:
		s, ok := asString(raw)
		if !ok {
			return nil, "must be a date yyyy-mm-dd"
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, "must be a date yyyy-mm-dd"
		}
		if !apitime.InRange(d) {
			return nil, apitime.RangeRule
		}
	case TypeSelect:
		s, ok := asString(raw)
		if !ok || !slices.Contains(f.Options, s) {
			return nil, "must be one of: " + strings.Join(f.Options, ", ")
		}
	case TypeMultiselect:
		s, ok := asString(raw)
		if !ok {
			return nil, "must be a string of comma-separated values of: " + strings.Join(f.Options, ", ")
		}
		chosen, ok := f.multiselect(s)
		if !ok {
			return nil, "must be a string of comma-separated values of: " + strings.Join(f.Options, ", ")
		}
		b, _ := json.Marshal(chosen)
		return b, ""
	default:
		return nil, "belongs to a field of unknown type " + f.Type
	}
	return raw, ""
}

// MaxStringValue bounds a string custom value: a custom field holds a label or a short note, and
// an unbounded one lets one request store megabytes per lead. There is no long-text type.
const MaxStringValue = 1000

// maxNumberLen bounds the text of a number value; a double has 17 significant digits.
const maxNumberLen = 64

// MaxValues bounds the custom values one record carries: a catalog has a few dozen fields, and a
// larger map is a mistake that would only make each key be looked up and refused.
const MaxValues = 100

// CountRule is the rule a customValues map of n entries breaks, or "" when it has at most
// MaxValues.
func CountRule(n int) string {
	if n > MaxValues {
		return fmt.Sprintf("must have at most %d fields", MaxValues)
	}
	return ""
}

// multiselect splits s on commas; every part must be an option. An empty string chooses nothing;
// an empty part (",,", "a,") is a mistake, not an empty choice.
func (f Field) multiselect(s string) (string, bool) {
	if strings.TrimSpace(s) == "" {
		return "", true
	}
	var chosen []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return "", false
		}
		if !slices.Contains(f.Options, part) {
			return "", false
		}
		if !slices.Contains(chosen, part) {
			chosen = append(chosen, part)
		}
	}
	return strings.Join(chosen, ","), true
}

func asString(raw json.RawMessage) (string, bool) {
	if raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
