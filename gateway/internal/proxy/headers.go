package proxy

import (
	"net/http"
	"net/textproto"
	"strings"

	"ccplatform/pkg/requestid"
)

// sendsZeroLength reports whether a bodiless request of method carries "Content-Length: 0", as
// http.Transport decides it: many servers expect a length with these methods.
func sendsZeroLength(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

func appendHeader(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, v...)
	return append(b, "\r\n"...)
}

// dropRequestHeader reports the request headers never copied as they are: those written from
// other fields (Host, User-Agent, Content-Length), the hop-by-hop ones, the client's forwarding
// headers, and the identity and trace headers the gateway replaces.
func dropRequestHeader(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length",
		"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
		"Traceparent", "Tracestate":
		return true
	}
	return isIdentityHeader(k)
}

// dropResponseHeader reports the upstream answer's headers never passed on: the hop-by-hop ones,
// and X-Request-Id, which the gateway has already set on its answer.
func dropResponseHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", requestid.Header:
		return true
	}
	return false
}

// connectionNamed is the canonical names of the headers a Connection header lists as hop-by-hop.
func connectionNamed(values []string) []string {
	var named []string
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				named = append(named, http.CanonicalHeaderKey(f))
			}
		}
	}
	return named
}

// containsToken reports whether a comma-separated header lists token, in any case.
func containsToken(values []string, token string) bool {
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(textproto.TrimString(f), token) {
				return true
			}
		}
	}
	return false
}

// validHeaderValue is httpguts.ValidHeaderFieldValue: no control bytes but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// isEventStream reports whether a Content-Type is text/event-stream, whose events must reach the
// client as they come.
func isEventStream(values []string) bool {
	if len(values) == 0 {
		return false
	}
	base, _, _ := strings.Cut(values[0], ";")
	return strings.EqualFold(strings.TrimSpace(base), "text/event-stream")
}

func addHeader(dst, src http.Header) {
	for k, vv := range src {
		for _, v := range vv {
			dst.Add(k, v)
		}
	}
}

// traceCarrier lets the trace propagator append its headers to a request being written.
type traceCarrier struct{ b []byte }

func (c *traceCarrier) Get(string) string { return "" }

func (c *traceCarrier) Set(k, v string) {
	if validHeaderValue(v) {
		c.b = appendHeader(c.b, http.CanonicalHeaderKey(k), v)
	}
}

func (c *traceCarrier) Keys() []string { return nil }
