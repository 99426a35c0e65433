package server_test

import (
	"net/http"
	"testing"

	"ccplatform/services/order/internal/servicetest"

	"github.com/stretchr/testify/assert"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "order_server", func(e *servicetest.Env) { env = e })
}

func TestHealthNeedsNoToken(t *testing.T) {
	res := env.Do(t, http.MethodGet, "/readyz", nil, "X-Internal-Token", "")
	assert.Equal(t, http.StatusOK, res.Status)
	assert.True(t, res.Success)
	assert.Contains(t, string(res.Data), `"database":"ok"`)
	assert.NotEmpty(t, res.Header.Get("X-Request-Id"))
}

func TestUnknownRouteIsAnEnvelope(t *testing.T) {
	res := env.Do(t, http.MethodGet, "/v2/order/nothing", nil)
	assert.Equal(t, http.StatusNotFound, res.Status)
	assert.False(t, res.Success)
	assert.Equal(t, "[]", string(res.Data))
}

func TestPathsWithAndWithoutTrailingSlash(t *testing.T) {
	for _, p := range []string{"/v2/order/detail/99999", "/v2/order/detail/99999/"} {
		res := env.Do(t, http.MethodGet, p, nil)
		assert.Equal(t, http.StatusNotFound, res.Status, p)
		assert.Equal(t, "order 99999 does not exist", res.Message, p)
	}
}

func TestRequestIDIsKept(t *testing.T) {
	res := env.Do(t, http.MethodGet, "/readyz", nil, "X-Request-Id", "req-123")
	assert.Equal(t, "req-123", res.Header.Get("X-Request-Id"))
}
