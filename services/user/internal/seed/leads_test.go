package seed_test

import (
	"testing"

	"ccplatform/services/user/internal/seed"

	"github.com/stretchr/testify/assert"
)

func TestDemoLeadCustomFieldsCoverEveryType(t *testing.T) {
	types := map[string]bool{}
	codes := map[string]bool{}
	for _, f := range seed.DemoLeadCustomFields() {
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
		assert.True(t, types[typ], "no demo lead field of type %s", typ)
	}
}
