// Package requestid carries the request id through a context so that every log line and every
// call to another service about one request can name it.
package requestid

import "context"

// Header is the header that carries the id between clients, the gateway and services.
const Header = "X-Request-Id"

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the id carried by ctx, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}
