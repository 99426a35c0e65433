package ops

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
)

// The service handler: the ops endpoints need no token, every route of routes does, both paths
// answer with a trailing slash too, and the body limit is the one given.
func TestAPIHandlerGuardsTheRoutesButNotTheOpsEndpoints(t *testing.T) {
	o := New("svc")
	h := API{Ops: o, Log: zap.NewNop(), InternalToken: "secret"}.Handler(16, func(r gin.IRouter) {
		r.POST("/v2/thing", web.Handle(func(c *gin.Context) (any, error) {
			var in map[string]any
			return in, web.DecodeJSON(c, &in)
		}))
	})
	send := func(method, path, token, body string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set(web.HeaderInternalToken, token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	assert.Equal(t, http.StatusOK, send(http.MethodGet, "/livez", "", ""))
	assert.Equal(t, http.StatusOK, send(http.MethodGet, "/metrics/", "", ""))
	assert.Equal(t, http.StatusUnauthorized, send(http.MethodPost, "/v2/thing", "", `{}`))
	assert.Equal(t, http.StatusUnauthorized, send(http.MethodPost, "/v2/thing", "wrong", `{}`))
	assert.Equal(t, http.StatusOK, send(http.MethodPost, "/v2/thing/", "secret", `{}`))
	assert.Equal(t, http.StatusRequestEntityTooLarge, send(http.MethodPost, "/v2/thing", "secret", `{"a":"0123456789abcdef"}`))
}
