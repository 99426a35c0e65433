package proxy

import (
	"slices"
	"strconv"
	"strings"

	"ccplatform/gateway/internal/auth"
	"ccplatform/pkg/access"
	"ccplatform/pkg/web"
)

// The identity headers are how an upstream learns who calls: the gateway writes them from the
// verified key, whatever a client sent under these names is dropped, and the raw API key never
// travels further. The forwarder (appendHead) takes the rule from here.

// identityHeaderNames are the request headers only the gateway writes.
var identityHeaderNames = []string{
	auth.HeaderAPIKey, web.HeaderUserID, web.HeaderAccessGroup, web.HeaderInternalToken,
	access.HeaderKeyID, access.HeaderKeyScopes,
}

// isIdentityHeader reports whether k (canonical) is one of identityHeaderNames.
func isIdentityHeader(k string) bool { return slices.Contains(identityHeaderNames, k) }

type header struct{ key, value string }

// identityHeaders are the headers an upstream gets: who calls, when a key was verified, and the
// internal token always. A fixed array keeps the forwarder's request free of an allocation.
func identityHeaders(id auth.Identity, internalToken string) (hs [5]header, n int) {
	if id.UserID != 0 {
		hs[0] = header{web.HeaderUserID, strconv.FormatInt(id.UserID, 10)}
		hs[1] = header{web.HeaderAccessGroup, id.AccessGroup}
		hs[2] = header{access.HeaderKeyID, strconv.FormatInt(id.KeyID, 10)}
		hs[3] = header{access.HeaderKeyScopes, strings.Join(id.Scopes, ",")}
		n = 4
	}
	hs[n] = header{web.HeaderInternalToken, internalToken}
	return hs, n + 1
}
