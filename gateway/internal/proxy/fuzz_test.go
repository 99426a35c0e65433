package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzForwarderMatchesReverseProxy sends the same request through the gateway's own forwarding
// loop and through httputil.ReverseProxy (the stream route's way) to the same echoing upstream: the
// upstream must see the same request and the client the same answer, or the client refuses to
// send it at all. Run it long with make fuzz FUZZ_MATCH=Forwarder FUZZTIME=5m.
func FuzzForwarderMatchesReverseProxy(f *testing.F) {
	f.Add("GET", "/v2/order/detail/1", "x=1", "X-Custom", "v", "")
	f.Add("POST", "/v2/order/create", "", "Content-Type", "application/json", `{"a":1}`)
	f.Add("GET", "/v2/a%20b/%2F/c", "q=%C3%A9&arr[]=1", "Connection", "X-Hop", "")
	f.Add("PUT", "/v2/x", "a=1;b=2", "Te", "trailers", "abc")
	f.Add("DELETE", "/v2/x", "", "Expect", "100-continue", "body")
	f.Add("POST", "/v2/x", "", "Transfer-Encoding", "chunked", "x")
	f.Add("GET", "/v2/x", "", "X-User-Id", "5", "")

	up := newCountingServer(f, echoHandler)
	lean := newGateway(f, time.Second, target(f, up.URL))
	streamTarget := target(f, up.URL)
	streamTarget.Stream = true
	reference := newGateway(f, time.Second, streamTarget)

	type outcome struct {
		Status int
		Header http.Header
		Seen   *seen
		Body   string
	}
	do := func(gw *gateway, method, path, query, hk, hv, body string) (outcome, bool) {
		u := gw.URL + path
		if query != "" {
			u += "?" + query
		}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, u, rd)
		if err != nil {
			return outcome{}, false
		}
		req.Header.Set(hk, hv)
		res, err := gw.Client().Do(req)
		if err != nil {
			return outcome{}, false // the client refused to send it (bad header, bad URL)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return outcome{}, false
		}
		res.Header.Del("Date")
		o := outcome{Status: res.StatusCode, Header: res.Header, Body: string(b)}
		if res.Header.Get("Content-Type") == "application/json" && res.StatusCode == http.StatusOK && method != http.MethodHead {
			var s seen
			if json.Unmarshal(b, &s) == nil {
				delete(s.Header, "X-Forwarded-Host") // the two gateways listen on different ports
				o.Seen, o.Body = &s, ""
				o.Header.Del("Content-Length")
			}
		}
		return o, true
	}
	f.Fuzz(func(t *testing.T, method, path, query, hk, hv, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?#") {
			return
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return
		}
		got, okGot := do(lean, method, path, query, hk, hv, body)
		want, okWant := do(reference, method, path, query, hk, hv, body)
		if okGot != okWant {
			t.Fatalf("%s %s?%s %s=%q: sent through one path only (forwarder %v, reverse proxy %v)", method, path, query, hk, hv, okGot, okWant)
		}
		if !okGot {
			return
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Fatalf("%s %s?%s %s=%q body %q:\nforwarder     %s\nreverse proxy %s", method, path, query, hk, hv, body, g, w)
		}
	})
}
