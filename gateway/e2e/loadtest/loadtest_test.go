package loadtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClientSendsHeadersAndUnwrapsTheEnvelope(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Header.Get("X-Api-Key") != "k":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"success":false}`))
		case r.URL.Path == "/echo":
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			_, _ = w.Write([]byte(`{"success":true,"data":` + string(body) + `}`))
		default:
			assert.Empty(t, r.Header.Get("Content-Type"), "no body, no content type")
			_, _ = w.Write([]byte(`not json`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := NewClient(srv.URL, 4, map[string]string{"X-Api-Key": "k"})

	var out struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, c.Do(ctx, http.MethodPost, "/echo", []byte(`{"id":7}`), &out))
	assert.Equal(t, int64(7), out.ID)
	require.NoError(t, c.Do(ctx, http.MethodGet, "/plain", nil, nil), "no out: the answer is not read")
	assert.ErrorContains(t, c.Do(ctx, http.MethodGet, "/plain", nil, &out), "GET /plain: not an envelope")

	anon := &Client{HTTP: c.HTTP, BaseURL: srv.URL}
	status, answer, err := anon.Send(ctx, http.MethodGet, "/echo", nil)
	require.NoError(t, err, "an error status is an answer")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.JSONEq(t, `{"success":false}`, string(answer))
	assert.ErrorContains(t, anon.Do(ctx, http.MethodGet, "/echo", nil, nil), "GET /echo: status 401")

	srv.Close()
	status, _, err = c.Send(ctx, http.MethodGet, "/echo", nil)
	assert.Error(t, err)
	assert.Zero(t, status, "no answer")
}

func TestPercentile(t *testing.T) {
	assert.Zero(t, Percentile(nil, 0.99))
	lat := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	assert.Equal(t, time.Duration(6), Percentile(lat, 0.5))
	assert.Equal(t, time.Duration(10), Percentile(lat, 0.99))
	assert.Equal(t, time.Duration(10), Percentile(lat, 1), "the top quantile is the maximum")
	assert.Equal(t, time.Duration(5), lat[0], "the caller's order is kept")
	assert.Equal(t, 1.5, Millis(1500*time.Microsecond))
}
