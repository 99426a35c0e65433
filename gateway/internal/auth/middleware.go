package auth

import (
	"context"

	"ccplatform/pkg/access"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

type identityKey struct{}

// WithIdentity returns ctx carrying id as if Require had verified it: the seam through which the
// tests of what runs behind Require (proxy, server) get a caller, since the context key is this
// package's own. Nothing in the gateway calls it.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, &verified{id: id})
}

// FromContext is the identity Require verified for the request, if any. Only this package can
// put one there, so whatever the client sent in headers cannot pose as it.
func FromContext(ctx context.Context) (Identity, bool) {
	v, ok := ctx.Value(identityKey{}).(*verified)
	if !ok {
		return Identity{}, false
	}
	return v.id, true
}

// KeyOf is the hash of the request's verified API key (as a string, to key maps by), or "" before
// Require ran.
func KeyOf(c *gin.Context) string {
	if v, ok := c.Request.Context().Value(identityKey{}).(*verified); ok {
		return v.keyHash
	}
	return ""
}

// Require refuses requests without a valid X-Api-Key: 401 when it is missing or refused, 503 when
// the user service cannot say. On success the verified identity is in the request's context, and
// the request's X-User-Id and X-Access-Group headers hold it (never the client's values) so that
// the access log names the real caller. What the context carries is the cache entry's own record,
// so a request served from the cache costs no allocation for it.
func Require(cache *Cache) gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Request.Header
		h.Del(identity.HeaderUserID)
		h.Del(identity.HeaderAccessGroup)
		h.Del(access.HeaderKeyID)
		h.Del(access.HeaderKeyScopes)
		key := h.Get(HeaderAPIKey)
		if key == "" {
			cache.refused(errMissingKey)
			web.Fail(c, errMissingKey)
			return
		}
		v, err := cache.verified(c.Request.Context(), HashKey(key), key)
		if err != nil {
			cache.refused(err)
			web.Fail(c, err)
			return
		}
		h.Set(identity.HeaderUserID, v.userIDText)
		h.Set(identity.HeaderAccessGroup, v.id.AccessGroup)
		h.Set(access.HeaderKeyID, v.keyIDText)
		c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), identityKey{}, v))
		c.Next()
	}
}
