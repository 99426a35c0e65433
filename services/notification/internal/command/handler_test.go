package command

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// users answers Lookup from a fixed table: id → active.
type users map[int64]bool

func (u users) Lookup(_ context.Context, id int64) (found, active bool, err error) {
	active, found = u[id]
	return found, active, nil
}

// Issue 18: a private notification to an inactive user was stored, a record nobody ever
// receives. The refusal comes before anything is published: the handler has no publisher here,
// and reaching it would panic.
func TestPrivateToAnUnknownOrInactiveUserIsRefused(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	NewHandler(users{7: false, 8: true}, nil, 0).Routes(r, func(*gin.Context) {})
	for id, want := range map[string]string{"7": "user 7 is not active", "9": "user 9 does not exist"} {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v2/notification/private",
			strings.NewReader(`{"userId":`+id+`,"title":"t","text":"x","priority":"default","level":"default"}`))
		req.Header.Set("Content-Type", "application/json")
		r.ServeHTTP(w, req)
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		var env struct {
			Success bool
			Message string
			Data    struct{ Errors map[string]string }
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &env))
		assert.False(t, env.Success)
		assert.Equal(t, map[string]string{"userId": want}, env.Data.Errors)
		assert.Equal(t, "userId: "+want, env.Message)
	}
}
