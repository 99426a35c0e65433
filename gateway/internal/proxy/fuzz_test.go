package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzForwarderMatchesNetHTTP sends the same request through the gateway's forwarder and straight
// to the same upstream with net/http's client: the upstream must see the same request but for
// what the gateway changes by its rules (hop-by-hop headers and any a client names in Connection
// dropped, X-Forwarded-*, identity, request id and trace headers its own; docs in gateway/README.md),
// and the client the same answer but for the hop-by-hop headers and the gateway's request id; or
// the client refuses to send it at all. mode picks how the request's body goes (bit 0: chunked, of
// unknown length; bit 1: through an upload route, which streams every body) and the upstream's
// answer (bits 2-3: an echo of the request, a chunked answer with a trailer, 204, an error
// envelope). Run it long with make fuzz FUZZ_MATCH=Forwarder FUZZTIME=5m.
func FuzzForwarderMatchesNetHTTP(f *testing.F) {
	f.Add("GET", "/v2/order/detail/1", "x=1", "X-Custom", "v", "", byte(0))
	f.Add("POST", "/v2/order/create", "", "Content-Type", "application/json", `{"a":1}`, byte(0))
	f.Add("POST", "/v2/lead/import", "", "Content-Type", "text/csv", "phone\n1\n", byte(3))
	f.Add("GET", "/v2/a%20b/%2F/c", "q=%C3%A9&arr[]=1", "Connection", "X-Hop", "", byte(4))
	f.Add("PUT", "/v2/x", "a=1", "Te", "trailers", "abc", byte(1))
	f.Add("DELETE", "/v2/x", "", "Expect", "100-continue", "body", byte(8))
	f.Add("POST", "/v2/x", "", "Transfer-Encoding", "chunked", "x", byte(12))
	f.Add("GET", "/v2/x", "", "X-User-Id", "5", "", byte(0))
	f.Add("PATCH", "/v2/x", "", "Idempotency-Key", "k", "", byte(2))

	up := newCountingServer(f, func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Fuzz-Answer") {
		case "1":
			w.Header().Set("Trailer", "X-Sum")
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "part one,")
			http.NewResponseController(w).Flush()
			_, _ = io.WriteString(w, "part two")
			w.Header().Set("X-Sum", "42")
		case "2":
			w.WriteHeader(http.StatusNoContent)
		case "3":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Connection", "X-Secret")
			w.Header().Set("X-Secret", "1")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"success":false}`)
		default:
			echoHandler(w, r)
		}
	})
	plain := newGateway(f, time.Second, target(f, up.URL))
	uploadTarget := target(f, up.URL)
	uploadTarget.Upload = true
	upload := newGateway(f, time.Second, uploadTarget)
	direct := &http.Client{}

	type outcome struct {
		Status  int
		Header  http.Header
		Trailer http.Header
		Seen    *seen
		Body    string
	}
	do := func(c *http.Client, base, method, path, query, hk, hv, body string, mode byte) (outcome, error) {
		u := base + path
		if query != "" {
			u += "?" + query
		}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
			if mode&1 != 0 {
				rd = io.MultiReader(rd) // of unknown length: sent chunked
			}
		}
		req, err := http.NewRequest(method, u, rd)
		if err != nil {
			return outcome{}, err
		}
		req.Header.Set(hk, hv)
		if a := (mode >> 2) & 3; a != 0 {
			req.Header.Set("X-Fuzz-Answer", string(rune('0'+a)))
		}
		res, err := c.Do(req)
		if err != nil {
			return outcome{}, err // the client refused to send it (bad header, bad URL)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return outcome{}, err
		}
		res.Header.Del("Date")
		o := outcome{Status: res.StatusCode, Header: res.Header, Trailer: res.Trailer, Body: string(b)}
		if res.Header.Get("Content-Type") == "application/json" && res.StatusCode == http.StatusOK && method != http.MethodHead {
			var s seen
			if json.Unmarshal(b, &s) == nil {
				o.Seen, o.Body = &s, ""
				o.Header.Del("Content-Length")
			}
		}
		return o, nil
	}
	f.Fuzz(func(t *testing.T, method, path, query, hk, hv, body string, mode byte) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?#") || strings.EqualFold(hk, "X-Fuzz-Answer") {
			return
		}
		if !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}, method) {
			return // the gateway routes no other method
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return
		}
		if strings.ContainsFunc(query, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			// net/http's client writes a raw query as it is, so a space or control byte breaks
			// the request line: the gateway's server and the upstream's both refuse it before any
			// handler runs, and whether the client reads that 400 or a reset depends on how much
			// of its body it had sent. No forwarder is involved either way.
			return
		}
		gw := plain
		if mode&2 != 0 {
			gw = upload
		}
		got, errGot := do(gw.Client(), gw.URL, method, path, query, hk, hv, body, mode)
		want, errWant := do(direct, up.URL, method, path, query, hk, hv, body, mode)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("%s %s?%s %s=%q mode %d: sent one way only (through the gateway: %v; directly: %v)", method, path, query, hk, hv, mode, errGot, errWant)
		}
		if errGot != nil {
			return
		}
		if got.Seen != nil && want.Seen != nil {
			gh := http.Header(got.Seen.Header)
			if v := gh.Values("X-User-Id"); !slices.Equal(v, []string{"7"}) {
				t.Fatalf("upstream saw X-User-Id %q, not the verified caller's", v)
			}
			if v := gh.Values("X-Internal-Token"); !slices.Equal(v, []string{testToken}) {
				t.Fatalf("upstream saw X-Internal-Token %q", v)
			}
			for _, s := range []*seen{got.Seen, want.Seen} {
				// Both sides as the gateway's rules leave them: its own headers aside, the
				// client's hop-by-hop ones gone, the path as decoded (the gateway re-escapes it).
				h := http.Header(s.Header)
				for _, k := range connectionNamed(h["Connection"]) {
					h.Del(k)
				}
				te := containsToken(h["Te"], "trailers")
				for k := range h {
					if dropRequestHeader(k) && k != "User-Agent" && k != "Content-Length" || k == "X-Request-Id" {
						h.Del(k)
					}
				}
				if te {
					h.Set("Te", "trailers")
				}
				h.Del("Content-Length")
				s.Host = ""
				if p, q, _ := strings.Cut(s.RequestURI, "?"); q != "" || strings.Contains(s.RequestURI, "?") {
					s.RequestURI = unescapePath(p) + "?" + q
				} else {
					s.RequestURI = unescapePath(p)
				}
			}
			// A body of unknown length may reach the upstream with its length (net/http's
			// client sends a short one whole); the body itself must match.
			if mode&1 != 0 {
				got.Seen.Length, want.Seen.Length = 0, 0
			}
		}
		for _, o := range []*outcome{&got, &want} {
			for _, k := range connectionNamed(o.Header["Connection"]) {
				o.Header.Del(k)
			}
			for k := range o.Header {
				if dropResponseHeader(k) {
					o.Header.Del(k)
				}
			}
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Fatalf("%s %s?%s %s=%q body %q mode %d:\nthrough the gateway %s\ndirectly            %s", method, path, query, hk, hv, body, mode, g, w)
		}
	})
}

// unescapePath is p decoded, or p itself when it does not decode.
func unescapePath(p string) string {
	if d, err := url.PathUnescape(p); err == nil {
		return d
	}
	return textproto.TrimString(p)
}
