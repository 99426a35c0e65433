package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"ccplatform/pkg/customfield"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUpsertByCode(t *testing.T) {
	res := env.Do(t, http.MethodPost, "/internal/custom-fields", map[string]any{
		"code": "color", "name": "Color", "type": "select", "options": []string{"red", "green"},
	})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	id := res.ID()
	require.Positive(t, id)

	// Same code again: the same field, changed.
	res = env.Do(t, http.MethodPost, "/internal/custom-fields/", map[string]any{
		"code": "color", "name": "Colour", "type": "multiselect", "options": []string{"red", "green", "blue"},
	})
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	assert.Equal(t, id, res.ID())

	res = env.Do(t, http.MethodGet, "/internal/custom-fields", nil)
	require.Equal(t, http.StatusOK, res.Status)
	var data struct {
		List []customfield.Field `json:"list"`
	}
	require.NoError(t, json.Unmarshal(res.Data, &data))
	var found bool
	for _, f := range data.List {
		if f.ID == id {
			found = true
			assert.Equal(t, "Colour", f.Name)
			assert.Equal(t, "multiselect", f.Type)
			assert.Equal(t, []string{"red", "green", "blue"}, []string(f.Options))
		}
	}
	assert.True(t, found)
}

func TestUpsertRefusesBadDefinitions(t *testing.T) {
	res := env.Do(t, http.MethodPost, "/internal/custom-fields", map[string]any{"code": "x", "type": "colour"})
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.False(t, res.Success)
	assert.Contains(t, res.Errors(), "name")
	assert.Contains(t, res.Errors(), "type")

	res = env.Do(t, http.MethodPost, "/internal/custom-fields", `{"code": 5}`)
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, "code: must be a string", res.Message)
}

func TestCatalogNeedsTheInternalToken(t *testing.T) {
	res := env.Do(t, http.MethodGet, "/internal/custom-fields", nil, "X-Internal-Token", "")
	assert.Equal(t, http.StatusUnauthorized, res.Status)
	res = env.Do(t, http.MethodGet, "/internal/custom-fields", nil, "X-Internal-Token", "wrong")
	assert.Equal(t, http.StatusUnauthorized, res.Status)
}
