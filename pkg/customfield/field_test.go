package customfield

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"ccplatform/pkg/apperr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefinitionValidate(t *testing.T) {
	f, err := Definition{Code: "utm_source", Name: " Source ", Type: TypeString}.Validate()
	require.NoError(t, err)
	assert.Equal(t, "Source", f.Name)
	assert.Empty(t, f.Options)

	f, err = Definition{Code: "colors", Name: "Colors", Type: TypeMultiselect, Options: []string{"red", " green"}}.Validate()
	require.NoError(t, err)
	assert.Equal(t, []string{"red", "green"}, []string(f.Options))

	cases := map[string]struct {
		def    Definition
		fields []string
	}{
		"empty":                   {Definition{}, []string{"code", "name", "type"}},
		"bad code":                {Definition{Code: "a b", Name: "n", Type: TypeString}, []string{"code"}},
		"select without options":  {Definition{Code: "c", Name: "n", Type: TypeSelect}, []string{"options"}},
		"comma in multiselect":    {Definition{Code: "c", Name: "n", Type: TypeMultiselect, Options: []string{"a,b"}}, []string{"options"}},
		"repeated option":         {Definition{Code: "c", Name: "n", Type: TypeSelect, Options: []string{"a", "a"}}, []string{"options"}},
		"options on a plain type": {Definition{Code: "c", Name: "n", Type: TypeInteger, Options: []string{"a"}}, []string{"options"}},
		"option too long":         {Definition{Code: "c", Name: "n", Type: TypeSelect, Options: []string{strings.Repeat("я", maxOptionLen+1)}}, []string{"options"}},
		"too many options":        {Definition{Code: "c", Name: "n", Type: TypeSelect, Options: manyOptions(maxOptions + 1)}, []string{"options"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := tc.def.Validate()
			e, ok := apperr.As(err)
			require.True(t, ok)
			assert.Equal(t, apperr.Invalid, e.Kind)
			for _, f := range tc.fields {
				assert.Contains(t, e.Fields, f)
			}
			assert.Len(t, e.Fields, len(tc.fields))
		})
	}
}

func manyOptions(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "o" + strconv.Itoa(i)
	}
	return out
}

func TestCountRule(t *testing.T) {
	assert.Empty(t, CountRule(0))
	assert.Empty(t, CountRule(MaxValues))
	assert.Equal(t, "must have at most 100 fields", CountRule(MaxValues+1))
	assert.Equal(t, "must have at most 100 fields", CountRule(10_000))
}

func TestCheckValue(t *testing.T) {
	options := []string{"red", "green", "blue"}
	cases := []struct {
		typ, in, want string // want "" means refused
	}{
		{TypeString, `"x"`, `"x"`},
		{TypeString, `5`, ``},
		{TypeString, `null`, ``},
		{TypeInteger, `42`, `42`},
		{TypeInteger, `-3`, `-3`},
		{TypeInteger, `4.5`, ``},
		{TypeInteger, `"42"`, ``},
		{TypeNumber, `4.5`, `4.5`},
		{TypeNumber, `"4.5"`, ``},
		{TypeBoolean, `true`, `true`},
		{TypeBoolean, `"true"`, ``},
		{TypeDate, `"2027-12-31"`, `"2027-12-31"`},
		{TypeDate, `"31.12.2027"`, ``},
		{TypeDate, `"2027-02-30"`, ``},
		{TypeDate, `"0000-06-01"`, ``}, // no year 0 (apitime.InRange)
		{TypeDate, `"0001-01-01"`, `"0001-01-01"`},
		{TypeDate, `"9999-12-31"`, `"9999-12-31"`},
		{TypeSelect, `"red"`, `"red"`},
		{TypeSelect, `"pink"`, ``},
		{TypeSelect, `["red"]`, ``},
		{TypeMultiselect, `"red, blue,red"`, `"red,blue"`},
		{TypeMultiselect, `"red"`, `"red"`},
		{TypeMultiselect, `""`, `""`},
		{TypeMultiselect, `"red,pink"`, ``},
		{TypeMultiselect, `["red"]`, ``},
		{TypeMultiselect, `",,"`, ``},
		{TypeMultiselect, `"red,"`, ``},
		{TypeMultiselect, `"red, ,blue"`, ``},
		{TypeString, `"` + strings.Repeat("я", MaxStringValue) + `"`, `"` + strings.Repeat("я", MaxStringValue) + `"`},
		// Issue 18: a 100,000-character string value was stored.
		{TypeString, `"` + strings.Repeat("я", MaxStringValue+1) + `"`, ``},
		{TypeString, `"` + strings.Repeat("x", 100_000) + `"`, ``},
		{TypeNumber, `1e308`, `1e308`},
		{TypeNumber, `-0.000001`, `-0.000001`},
		{TypeNumber, `1e999`, ``},
		{TypeNumber, strings.Repeat("9", 100_000), ``},
		{TypeNumber, "0." + strings.Repeat("1", maxNumberLen), ``},
		{TypeInteger, strings.Repeat("9", 100_000), ``},
	}
	for _, tc := range cases {
		f := Field{ID: 1, Code: "f", Type: tc.typ, Options: options}
		got, rule := f.CheckValue(json.RawMessage(tc.in))
		if tc.want == "" {
			assert.NotEmpty(t, rule, "%s %s must be refused", tc.typ, tc.in)
			assert.Nil(t, got)
		} else {
			assert.Empty(t, rule, "%s %s", tc.typ, tc.in)
			assert.JSONEq(t, tc.want, string(got), "%s %s", tc.typ, tc.in)
		}
	}
}

func TestCheckValues(t *testing.T) {
	values := map[int64]json.RawMessage{
		1: json.RawMessage(`"text"`), 2: json.RawMessage(`5`), 3: json.RawMessage(`"x"`),
		4: json.RawMessage(`"b, a,b"`),
	}
	fields := map[int64]Field{
		1: {ID: 1, Type: TypeString},
		2: {ID: 2, Type: TypeString},
		4: {ID: 4, Type: TypeMultiselect, Options: []string{"a", "b"}},
	}
	fe := apperr.FieldErrors{}
	CheckValues(values, fields, "order", fe)
	assert.Equal(t, "must be a string", fe["customValues.2"])
	assert.Equal(t, "no order custom field has id 3", fe["customValues.3"])
	assert.NotContains(t, fe, "customValues.1")
	assert.JSONEq(t, `"text"`, string(values[1]))
	assert.JSONEq(t, `"b,a"`, string(values[4]), "the checked value replaces the sent one")
}
