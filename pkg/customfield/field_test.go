package customfield

import (
	"encoding/json"
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
		{TypeString, `"` + strings.Repeat("я", MaxStringValue+1) + `"`, ``},
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
