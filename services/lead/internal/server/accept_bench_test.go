package server_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"ccplatform/services/lead/internal/servicetest"
)

// BenchmarkAsyncAccept is one async create through lead-api's whole handler (middleware, body
// check, signed job id, confirmed publish), without the network: its allocations are what the
// collector pays for per accept (docs/performance.md, figure (2)).
func BenchmarkAsyncAccept(b *testing.B) {
	orderSeq++
	order, code := orderSeq, "order-"+strconv.FormatInt(orderSeq, 10)
	env.Order(order, code)
	body := []byte(`{"leadType":"straight","phone":"+79161234567","orderId":` + strconv.FormatInt(order, 10) +
		`,"orderCode":"` + code + `","name":"Bench client","sourceComment":"bench"}`)
	h := env.Client.Handler
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v2/lead/create-async", bytes.NewReader(body))
		req.Header.Set("X-Internal-Token", servicetest.Token)
		req.Header.Set("X-User-Id", servicetest.UserID)
		req.Header.Set("X-Access-Group", "admin")
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
