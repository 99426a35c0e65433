package identity_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"ccplatform/pkg/access"
	"ccplatform/pkg/identity"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
)

func TestOfReadsTheForwardedIdentity(t *testing.T) {
	of := func(h map[string]string) identity.Caller {
		req := httptest.NewRequest(http.MethodGet, "/me", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = req
		return identity.Of(c)
	}
	assert.Equal(t, identity.Caller{UserID: 42, AccessGroup: "admin", KeyID: 7, Scopes: []string{"leads:read", "calls:read"}},
		of(map[string]string{identity.HeaderUserID: "42", identity.HeaderAccessGroup: "admin",
			access.HeaderKeyID: "7", access.HeaderKeyScopes: "leads:read,calls:read"}))
	assert.Equal(t, identity.Caller{}, of(nil), "an internal call between services: no user")
}

func TestRefIsTheAuthorToRecord(t *testing.T) {
	assert.Nil(t, identity.Caller{}.Ref())
	assert.Equal(t, int64(5), *identity.Caller{UserID: 5}.Ref())
}
