package owner_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/services/webhook/internal/owner"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userService answers POST /internal/users/recipients as the user service does: the user with its
// state, 404 for an unknown one, 503 while it is down.
func userService(t *testing.T, active map[int64]bool, down *atomic.Bool, calls *atomic.Int64) *svcclient.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		assert.Equal(t, "/internal/users/recipients", r.URL.Path)
		var in struct {
			UserID int64 `json:"userId"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&in))
		w.Header().Set("Content-Type", "application/json")
		a, known := active[in.UserID]
		switch {
		case down.Load():
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"success":false,"message":"down","data":[]}`))
		case !known:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"success":false,"message":"user not found","data":[]}`))
		default:
			b, _ := json.Marshal(map[string]any{"success": true, "message": "", "data": map[string]any{
				"list": []map[string]any{{"id": in.UserID, "isActive": a}}}})
			_, _ = w.Write(b)
		}
	}))
	t.Cleanup(srv.Close)
	c := svcclient.New("user", srv.URL, "token", time.Second)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestActiveAsksTheUserServiceAndKeepsTheAnswerForTheTTL(t *testing.T) {
	var down atomic.Bool
	var calls atomic.Int64
	r := owner.New(userService(t, map[int64]bool{1: true, 2: false}, &down, &calls), time.Hour)
	ctx := context.Background()
	for id, want := range map[int64]bool{1: true, 2: false, 3: false} {
		got, err := r.Active(ctx, id)
		require.NoError(t, err, id)
		assert.Equal(t, want, got, "user %d (3: deleted)", id)
	}
	assert.EqualValues(t, 3, calls.Load())
	_, err := r.Active(ctx, 1)
	require.NoError(t, err)
	assert.EqualValues(t, 3, calls.Load(), "cached")

	down.Store(true)
	_, err = owner.New(userService(t, map[int64]bool{1: true}, &down, &calls), time.Hour).Active(ctx, 1)
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err), "a user service that cannot answer is an error to retry, not an inactive owner")

	fresh := owner.New(userService(t, map[int64]bool{1: true}, new(atomic.Bool), &calls), 0)
	before := calls.Load()
	for range 2 {
		_, err := fresh.Active(ctx, 1)
		require.NoError(t, err)
	}
	assert.Equal(t, before+2, calls.Load(), "a TTL of 0 keeps nothing")
}
