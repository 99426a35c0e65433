package ops

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
)

// BenchmarkHTTPMetrics is the request metrics' own cost: one request through a service's engine
// with the middleware and without it, in the same run (docs/performance.md, figure (1b)).
func BenchmarkHTTPMetrics(b *testing.B) {
	for _, tc := range []struct {
		name string
		mw   []gin.HandlerFunc
	}{
		{"off", nil},
		{"on", []gin.HandlerFunc{New("b").HTTPMetrics()}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := web.NewEngine(zap.NewNop(), web.DefaultBodyLimit, tc.mw...)
			e.GET("/v2/lead/detail/:id", func(c *gin.Context) { c.Status(http.StatusNoContent) })
			req := httptest.NewRequest(http.MethodGet, "/v2/lead/detail/7", nil)
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
