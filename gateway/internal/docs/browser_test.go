package docs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ccplatform/gateway/api"
	"ccplatform/gateway/internal/auth"
	"ccplatform/gateway/internal/browsertest"
	"ccplatform/gateway/internal/proxy"
	"ccplatform/gateway/internal/ratelimit"
	"ccplatform/gateway/internal/route"
	"ccplatform/gateway/internal/server"

	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The reference page in a real browser: headless Chromium, driven over the DevTools protocol,
// opens /docs/ from the gateway's own handler and must render the operations and the
// authentication scheme of the description without a single error in its console (a file that
// does not load, a Content-Security-Policy violation, an exception).
func TestDocsPageRendersInChromium(t *testing.T) {
	want := describedBy(t)

	srv := httptest.NewServer(gatewayHandler(t))
	t.Cleanup(srv.Close)

	// Bounds for a hung browser, not for speed: a page of this size renders in about a second, but
	// under a loaded 2-core CI machine rendering once took 28 s.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bctx, problems := browsertest.Open(t, ctx, 1280, 1000)

	start := time.Now()
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/docs/")), "open %s/docs/", srv.URL)

	// Redoc fetched /openapi.json and rendered the operation, as a heading of its own. An error in
	// the console ends the wait at once: a page that reports one fails whatever it shows.
	rendered := fmt.Sprintf(`[...document.querySelectorAll("h2")].some(h => h.textContent.trim() === %s)`, browsertest.JSString(want.summary))
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](rendered)); err == nil && ok {
			break
		}
		if problems.String() != "" || time.Now().After(deadline) {
			time.Sleep(500 * time.Millisecond) // what follows the first error
			browsertest.Screenshot(t, bctx, "gateway-docs-page", true)
			t.Fatalf("the page did not render the operation %q (POST /v2/lead/create/) after %s\nbrowser console:\n%s",
				want.summary, time.Since(start).Round(time.Millisecond), problems.String())
		}
	}
	// The authentication section Redoc makes of components.securitySchemes names the header.
	auth, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf(
		`document.getElementById(%s)?.innerText ?? ""`, browsertest.JSString("section/Authentication/"+want.scheme))))
	require.NoError(t, err)
	if !strings.Contains(auth, "Header parameter name: "+want.header) {
		t.Errorf("the page has no authentication section for the scheme %q naming its header %s (section text %q)",
			want.scheme, want.header, auth)
	}
	t.Logf("rendered in %s", time.Since(start).Round(time.Millisecond))
	browsertest.Screenshot(t, bctx, "gateway-docs-page", true)

	// Search runs in a worker (worker-src blob:): it must answer too.
	sctx, cancelSearch := context.WithTimeout(bctx, 60*time.Second)
	defer cancelSearch()
	results := `document.querySelectorAll('[data-role="search:results"] li').length > 0`
	if err := chromedp.Do(sctx,
		chromedp.SendKeys(chromedp.CSS(`input[placeholder^="Search"]`), "lead"),
		chromedp.Poll[chromedp.Void](results),
	); err != nil {
		t.Errorf("the page's search found nothing for \"lead\" within 60 s: %v", err)
	}
	if p := problems.String(); p != "" {
		t.Fatalf("the page wrote errors to the browser console:\n%s", p)
	}
}

type described struct {
	summary        string // of POST /v2/lead/create/
	scheme, header string // the apiKey security scheme and its header
}

// describedBy reads from the description what the page must show.
func describedBy(t *testing.T) described {
	t.Helper()
	raw, err := api.JSON()
	require.NoError(t, err)
	var doc struct {
		Paths      map[string]map[string]struct{ Summary string }
		Components struct {
			SecuritySchemes map[string]struct{ Type, In, Name string } `json:"securitySchemes"`
		}
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	d := described{summary: doc.Paths["/v2/lead/create/"]["post"].Summary}
	require.NotEmpty(t, d.summary, "openapi.yaml: POST /v2/lead/create/ has a summary")
	for name, s := range doc.Components.SecuritySchemes {
		if s.Type == "apiKey" && s.In == "header" {
			d.scheme, d.header = name, s.Name
		}
	}
	require.Equal(t, "X-Api-Key", d.header, "openapi.yaml: components.securitySchemes has the X-Api-Key header scheme")
	return d
}

// gatewayHandler is the gateway's handler built as main builds it, with nothing behind it: the
// page and the description are answered by the gateway itself.
func gatewayHandler(t *testing.T) http.Handler {
	t.Helper()
	spec, err := api.JSON()
	require.NoError(t, err)
	users := svcclient.New("user", "http://127.0.0.1:1", "token", time.Second)
	h, err := server.New(server.Deps{
		Ops:       ops.New("gateway"),
		Log:       zap.NewNop(),
		Routes:    route.Table(),
		Upstreams: route.Upstreams{},
		Auth:      auth.NewCache(auth.UserService(users), auth.Options{}),
		Limiter:   ratelimit.New(ratelimit.Options{RPS: 200, Burst: 400}),
		Proxy:     proxy.New(proxy.Config{InternalToken: "token", UpstreamTimeout: time.Second}, zap.NewNop()),
		BodyLimit: 1 << 20,
		SpecYAML:  api.YAML,
		SpecJSON:  spec,
	})
	require.NoError(t, err)
	return h
}
