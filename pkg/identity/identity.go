// Package identity is who makes a request, as the gateway verified it and forwarded it to the
// services in headers: the user, their access group and the API key with its scopes.
package identity

import (
	"strconv"
	"strings"

	"ccplatform/pkg/access"

	"github.com/gin-gonic/gin"
)

// Headers that carry the identity the gateway verified.
const (
	HeaderUserID      = "X-User-Id"
	HeaderAccessGroup = "X-Access-Group"
)

// Caller is the identity the gateway verified for this request, with the API key it came with.
type Caller struct {
	UserID      int64
	AccessGroup string
	KeyID       int64
	// Scopes narrow the key; none means the user's full rights.
	Scopes []string
}

// Ref is the caller's user id to record as an author (createdBy, updatedBy), nil for a call
// without a user.
func (c Caller) Ref() *int64 {
	if c.UserID <= 0 {
		return nil
	}
	id := c.UserID
	return &id
}

// Of reads the verified identity the gateway forwarded; UserID is 0 when there is none
// (internal calls between services).
func Of(c *gin.Context) Caller {
	id := headerInt(c, HeaderUserID)
	key := headerInt(c, access.HeaderKeyID)
	var scopes []string
	if raw := c.GetHeader(access.HeaderKeyScopes); raw != "" {
		scopes = strings.Split(raw, ",")
	}
	return Caller{UserID: id, AccessGroup: c.GetHeader(HeaderAccessGroup), KeyID: key, Scopes: scopes}
}

// headerInt is header name as an integer, 0 when it is absent or not one. An absent header is
// common (internal calls carry no key) and is not parsed: a failed parse allocates its error.
func headerInt(c *gin.Context, name string) int64 {
	raw := c.GetHeader(name)
	if raw == "" {
		return 0
	}
	n, _ := strconv.ParseInt(raw, 10, 64)
	return n
}
