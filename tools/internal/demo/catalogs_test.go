package demo

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDemoCustomFieldsCoverEveryType(t *testing.T) {
	for name, fields := range map[string][]CustomField{"order": OrderCustomFields(), "lead": LeadCustomFields()} {
		t.Run(name, func(t *testing.T) {
			types := map[string]bool{}
			codes := map[string]bool{}
			for _, f := range fields {
				types[f.Type] = true
				assert.False(t, codes[f.Code], "code %s repeats", f.Code)
				codes[f.Code] = true
				if f.Type == "select" || f.Type == "multiselect" {
					assert.NotEmpty(t, f.Options, f.Code)
				} else {
					assert.Empty(t, f.Options, f.Code)
				}
			}
			for _, typ := range []string{"string", "integer", "number", "boolean", "date", "select", "multiselect"} {
				assert.True(t, types[typ], "no demo %s field of type %s", name, typ)
			}
		})
	}
}
