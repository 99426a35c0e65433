package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"ccplatform/gateway/internal/auth"

	"ccplatform/pkg/requestid"
	"ccplatform/pkg/tracing"
)

// appendHead writes the upstream request's line and headers into b, as httputil.ReverseProxy
// over http.Transport would send them: the hop-by-hop headers (and any the client names in
// Connection) dropped, X-Forwarded-* and the identity headers the gateway's own, the trace the
// gateway's span. A streamed body of unknown length, or one with trailers, goes chunked.
func (f *forwarder) appendHead(b []byte, r *http.Request) ([]byte, error) {
	ctx := r.Context()
	id, _ := auth.FromContext(ctx)
	reqID := requestid.From(ctx)
	h := r.Header

	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	b = append(b, method...)
	b = append(b, ' ')
	b = f.appendRequestURI(b, r.URL)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, f.host...)
	b = append(b, "\r\n"...)

	named := connectionNamed(h["Connection"])
	if ua, ok := h["User-Agent"]; ok && len(ua) > 0 && !slices.Contains(named, "User-Agent") {
		// Only the first value travels, as http.Transport writes it; no User-Agent of the
		// client's means none upstream, not Go's default.
		if v := textproto.TrimString(ua[0]); v != "" {
			b = appendHeader(b, "User-Agent", v)
		}
	}
	if chunkedBody(r) {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		if len(r.Trailer) > 0 {
			keys := make([]string, 0, len(r.Trailer))
			for k := range r.Trailer {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = appendHeader(b, "Trailer", strings.Join(keys, ","))
		}
	} else if cl := r.ContentLength; cl > 0 || sendsZeroLength(method) {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, max(cl, 0), 10)
		b = append(b, "\r\n"...)
	}
	for k, vv := range h {
		if dropRequestHeader(k) || (reqID != "" && k == requestid.Header) || slices.Contains(named, k) {
			continue
		}
		for _, v := range vv {
			b = appendHeader(b, k, v)
		}
	}
	if containsToken(h["Te"], "trailers") {
		b = appendHeader(b, "Te", "trailers")
	}
	// X-Forwarded-* as httputil.ProxyRequest.SetXForwarded sets them, the client's own dropped.
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		b = appendHeader(b, "X-Forwarded-For", ip)
	}
	b = appendHeader(b, "X-Forwarded-Host", r.Host)
	if r.TLS == nil {
		b = appendHeader(b, "X-Forwarded-Proto", "http")
	} else {
		b = appendHeader(b, "X-Forwarded-Proto", "https")
	}
	// The identity headers (identity.go). These values do not come from the request parser, so
	// they are checked as http.Transport checks every header.
	hs, n := identityHeaders(id, f.p.internalToken)
	for _, hd := range hs[:n] {
		if !validHeaderValue(hd.value) {
			return b, fmt.Errorf("invalid header field value for %q", hd.key)
		}
		b = appendHeader(b, hd.key, hd.value)
	}
	// The gateway's own span is the parent upstream, not the client's.
	tc := traceCarrier{b: b}
	tracing.Inject(ctx, &tc)
	b = tc.b
	if reqID != "" {
		if !validHeaderValue(reqID) {
			return b, fmt.Errorf("invalid header field value for %q", requestid.Header)
		}
		b = appendHeader(b, requestid.Header, reqID)
	}
	return append(b, "\r\n"...), nil
}

// chunkedBody reports whether r's body goes chunked: its length is unknown, or trailers follow it.
func chunkedBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	return r.ContentLength < 0 || len(r.Trailer) > 0
}

// appendBody reads r's body, of known length, in full onto b.
func appendBody(b []byte, r *http.Request) ([]byte, error) {
	if cl := int(r.ContentLength); cl > 0 {
		if r.Body == nil {
			return b, errors.New("request announces a body but has none")
		}
		n := len(b)
		b = slices.Grow(b, cl)[:n+cl]
		if _, err := io.ReadFull(r.Body, b[n:]); err != nil {
			return b[:n], fmt.Errorf("read request body: %w", err)
		}
	}
	return b, nil
}

// appendRequestURI writes the path (Target.Path or the request's, behind the upstream's base path,
// re-escaped from its decoded form as httputil.ReverseProxy does) and the query.
func (f *forwarder) appendRequestURI(b []byte, u *url.URL) []byte {
	p := u.Path
	if f.path != "" {
		p = f.path
	}
	out := url.URL{Path: singleJoiningSlash(f.basePath, p)}
	ep := out.EscapedPath()
	if ep == "" {
		ep = "/"
	}
	b = append(b, ep...)
	if u.ForceQuery || u.RawQuery != "" {
		b = append(b, '?')
		b = append(b, u.RawQuery...)
	}
	return b
}

// singleJoiningSlash joins two paths with exactly one slash between them, as httputil's URL
// rewriting does.
func singleJoiningSlash(a, b string) string {
	aslash := strings.HasSuffix(a, "/")
	bslash := strings.HasPrefix(b, "/")
	switch {
	case aslash && bslash:
		return a + b[1:]
	case !aslash && !bslash:
		return a + "/" + b
	}
	return a + b
}
