package auth

import (
	"context"
	"strconv"

	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

type identityKey struct{}

// WithIdentity returns ctx carrying the verified identity.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext is the identity Require verified for the request, if any. Only this package can
// put one there, so whatever the client sent in headers cannot pose as it.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

const keyHashKey = "auth.keyHash"

// KeyOf is the hash of the request's verified API key (as a string, to key maps by), or "" before
// Require ran.
func KeyOf(c *gin.Context) string {
	if h, ok := c.Get(keyHashKey); ok {
		return h.(string)
	}
	return ""
}

// Require refuses requests without a valid X-Api-Key: 401 when it is missing or refused, 503 when
// the user service cannot say. On success the verified identity is in the request's context, and
// the request's X-User-Id and X-Access-Group headers hold it (never the client's values) so that
// the access log names the real caller.
func Require(cache *Cache) gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Request.Header
		h.Del(web.HeaderUserID)
		h.Del(web.HeaderAccessGroup)
		key := h.Get(HeaderAPIKey)
		if key == "" {
			web.Fail(c, errMissingKey)
			return
		}
		hash := HashKey(key)
		id, err := cache.verifyHashed(c.Request.Context(), hash, key)
		if err != nil {
			web.Fail(c, err)
			return
		}
		h.Set(web.HeaderUserID, strconv.FormatInt(id.UserID, 10))
		h.Set(web.HeaderAccessGroup, id.AccessGroup)
		c.Set(keyHashKey, string(hash[:]))
		c.Request = c.Request.WithContext(WithIdentity(c.Request.Context(), id))
		c.Next()
	}
}
