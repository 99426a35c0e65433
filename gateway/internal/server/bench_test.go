package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"ccplatform/gateway/internal/auth"
	"ccplatform/gateway/internal/route"
	"ccplatform/pkg/access"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// BenchmarkDirect and BenchmarkThroughGateway compare one request straight to an upstream with
// the same request through the gateway (key answered from the cache), so the gateway's own cost
// shows side by side: go test -run x -bench . ./internal/server/
//
// Beside the wall time per request they report cpu-ns/op, the CPU time the whole process (client,
// gateway, upstream) spent per request: other work on a shared machine inflates the wall time of a
// run, much less its CPU time, so the difference of the two cpu-ns/op is the steadier measure of
// the gateway's own cost.
func BenchmarkDirect(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"success":true,"message":"","data":{"id":1}}`)
	}))
	defer up.Close()
	run(b, up.URL+"/v2/order/detail/1", "")
}

func BenchmarkThroughGateway(b *testing.B) {
	// As the gateway's main does; nothing else makes ids while a benchmark starts.
	uuid.EnableRandPool()
	h := newHarness(b, options{upstreamTimeout: 10 * time.Second})
	run(b, h.srv.URL+"/v2/order/detail/1/", goodKey)
}

func run(b *testing.B, url, key string) {
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	client := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.SetParallelism(32)
	b.ResetTimer()
	cpuBefore := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if key != "" {
				req.Header.Set("X-Api-Key", key)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpuBefore)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user and system CPU time the process has used, in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkPolicy is the cost of the route policy on a request (an agent reading a lead with a key
// narrowed to leads:read), beside the same route without it: go test -run x -bench Policy
// ./internal/server/. A proxied request costs tens of microseconds of the gateway's CPU
// (BenchmarkThroughGateway), so the policy's share is the difference of the two lines over that.
func BenchmarkPolicy(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	r := route.Route{Method: "GET", Path: "/v2/lead", Policy: route.Policy{
		Groups: []access.Group{access.Admin, access.Moderator, access.Client, access.CallCenterSenior, access.CallCenter, access.Arbitration},
		Scope:  access.LeadsRead}}
	ok := func(c *gin.Context) { c.Status(http.StatusOK) }
	ctx := auth.WithIdentity(context.Background(), auth.Identity{UserID: 9, AccessGroup: "call-center", KeyID: 3, Scopes: []string{"leads:read"}})
	for name, chain := range map[string][]gin.HandlerFunc{"off": {ok}, "on": {authorize(r, nil, false), ok}} {
		b.Run(name, func(b *testing.B) {
			e := gin.New()
			e.GET(r.Path, chain...)
			req := httptest.NewRequest(http.MethodGet, r.Path, nil).WithContext(ctx)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				e.ServeHTTP(w, req)
			}
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
		})
	}
}
