package callattempt

import (
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validate(t *testing.T, body string) (Group, apperr.FieldErrors) {
	t.Helper()
	var req CreateRequest
	require.NoError(t, web.Unmarshal([]byte(body), &req))
	g, err := req.Validate()
	if err != nil {
		e, ok := apperr.As(err)
		require.True(t, ok)
		return g, e.Fields
	}
	return g, nil
}

func TestValidate(t *testing.T) {
	g, fe := validate(t, `{"title":" Standard ","intervals":[5,30,1440]}`)
	require.Nil(t, fe)
	assert.Equal(t, Group{Title: "Standard", Intervals: []int64{5, 30, 1440}}, g)

	g, fe = validate(t, `{"title":"t","intervals":[1],"isDefault":true,"resetAttemptsEnabled":true}`)
	require.Nil(t, fe)
	assert.True(t, g.IsDefault)
	assert.True(t, g.ResetAttemptsEnabled)

	_, fe = validate(t, `{}`)
	assert.Equal(t, apperr.FieldErrors{"title": "is required", "intervals": "is required"}, fe)

	_, fe = validate(t, `{"title":"  ","intervals":[]}`)
	assert.Equal(t, apperr.FieldErrors{"title": "must not be empty", "intervals": "must not be empty"}, fe)

	_, fe = validate(t, `{"title":"t","intervals":[5,0,-1,600000]}`)
	assert.Len(t, fe, 3)
	assert.Contains(t, fe, "intervals[1]")
	assert.Contains(t, fe, "intervals[2]")
	assert.Contains(t, fe, "intervals[3]")
}
