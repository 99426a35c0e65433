package webtest

import (
	"net/http"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
)

func TestDoSendsWhatTheGatewaySendsAndDecodes(t *testing.T) {
	e := web.NewEngine(zap.NewNop(), web.DefaultBodyLimit)
	e.Use(web.RequireInternalToken("tok"))
	e.POST("/echo", web.Handle(func(c *gin.Context) (any, error) {
		var in struct {
			N int `json:"n"`
		}
		if err := web.DecodeJSON(c, &in); err != nil {
			return nil, err
		}
		if in.N < 0 {
			return nil, apperr.Field("n", "must be >= 0")
		}
		return web.ID{ID: int64(in.N) + identity.Of(c).UserID}, nil
	}))
	c := Client{Handler: e, Token: "tok", UserID: "7"}
	r := c.Do(t, http.MethodPost, "/echo", map[string]int{"n": 5})
	assert.Equal(t, http.StatusOK, r.Status)
	assert.True(t, r.Success)
	assert.Equal(t, int64(12), r.ID())

	r = c.Do(t, http.MethodPost, "/echo", `{"n":-1}`)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, map[string]string{"n": "must be >= 0"}, r.Errors())

	r = c.Do(t, http.MethodPost, "/echo", nil, web.HeaderInternalToken, "")
	assert.Equal(t, http.StatusUnauthorized, r.Status)
}
