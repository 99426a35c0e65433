package order_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInternalOrderByCode(t *testing.T) {
	id := create(t, body(t, map[string]any{"code": "by-code_1"}))
	want := detail(t, id)

	for _, path := range []string{"/internal/orders?code=by-code_1", "/internal/orders/?code=by-code_1"} {
		res := env.Do(t, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, res.Status, path)
		var got map[string]any
		require.NoError(t, json.Unmarshal(res.Data, &got))
		assert.Equal(t, want, got, "the same view as the detail operation")
	}

	res := env.Do(t, http.MethodGet, "/internal/orders?code="+url.QueryEscape("no such code"), nil)
	assert.Equal(t, http.StatusNotFound, res.Status)
	assert.Equal(t, `no order has code "no such code"`, res.Message)

	res = env.Do(t, http.MethodGet, "/internal/orders", nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, map[string]string{"code": "is required"}, res.Errors())

	res = env.Do(t, http.MethodGet, fmt.Sprintf("/internal/orders?code=%s", "by-code_1"), nil, "X-Internal-Token", "")
	assert.Equal(t, http.StatusUnauthorized, res.Status)
}
