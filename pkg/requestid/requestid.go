// Package requestid carries the request id through a context so that every log line and every
// call to another service about one request can name it.
package requestid

import "context"

// Header is the header that carries the id between clients, the gateway and services.
const Header = "X-Request-Id"

type key struct{}

// MaxLen bounds a request id a client may choose.
const MaxLen = 128

// Valid reports whether a client-chosen id may be kept: 1 to 128 characters of [A-Za-z0-9._:-].
// Anything else (markup, paths, spaces, control characters) is replaced by a fresh id, since the
// id is echoed in answers and written into every log line about the request.
func Valid(id string) bool {
	if len(id) == 0 || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the id carried by ctx, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}
