package docs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ccplatform/gateway/api"
	"ccplatform/gateway/internal/auth"
	"ccplatform/gateway/internal/proxy"
	"ccplatform/gateway/internal/ratelimit"
	"ccplatform/gateway/internal/route"
	"ccplatform/gateway/internal/server"

	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The reference page in a real browser: headless Chromium, driven over the DevTools protocol,
// opens /docs/ from the gateway's own handler and must render the operations and the
// authentication scheme of the description without a single error in its console (a file that
// does not load, a Content-Security-Policy violation, an exception).
func TestDocsPageRendersInChromium(t *testing.T) {
	browser := chromium(t)
	want := describedBy(t)

	srv := httptest.NewServer(gatewayHandler(t))
	t.Cleanup(srv.Close)

	// Bounds for a hung browser, not for speed: a page of this size renders in about a second, but
	// under a loaded 2-core CI machine rendering once took 28 s.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	var problems problemLog
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(problems.listen))
	defer cancelBrowser()

	start := time.Now()
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/docs/")), "open %s/docs/", srv.URL)

	// Redoc fetched /openapi.json and rendered the operation, as a heading of its own. An error in
	// the console ends the wait at once: a page that reports one fails whatever it shows.
	rendered := fmt.Sprintf(`[...document.querySelectorAll("h2")].some(h => h.textContent.trim() === %s)`, jsString(want.summary))
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](rendered)); err == nil && ok {
			break
		}
		if problems.String() != "" || time.Now().After(deadline) {
			time.Sleep(500 * time.Millisecond) // what follows the first error
			saveScreenshot(t, bctx)
			t.Fatalf("the page did not render the operation %q (POST /v2/lead/create/) after %s\nbrowser console:\n%s",
				want.summary, time.Since(start).Round(time.Millisecond), problems.String())
		}
	}
	// The authentication section Redoc makes of components.securitySchemes names the header.
	auth, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf(
		`document.getElementById(%s)?.innerText ?? ""`, jsString("section/Authentication/"+want.scheme))))
	require.NoError(t, err)
	if !strings.Contains(auth, "Header parameter name: "+want.header) {
		t.Errorf("the page has no authentication section for the scheme %q naming its header %s (section text %q)",
			want.scheme, want.header, auth)
	}
	t.Logf("rendered in %s", time.Since(start).Round(time.Millisecond))
	saveScreenshot(t, bctx)

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

// chromium is the browser's path; without one the test fails: the page is a feature, its test is
// not optional.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not on PATH: run scripts/deps.sh (as root it installs Debian's chromium package)")
	return ""
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

// problemLog collects what the browser reports as an error: console.error and console.assert
// calls, uncaught exceptions, and error entries of its own log (a resource that failed to load,
// a Content-Security-Policy violation).
type problemLog struct {
	mu    sync.Mutex
	lines []string
}

// listen runs on chromedp's reading goroutine: it only records.
func (p *problemLog) listen(ev any) {
	var line string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		args := make([]string, 0, len(ev.Args))
		for _, a := range ev.Args {
			switch {
			case a.Description != "":
				args = append(args, a.Description)
			default:
				args = append(args, string(a.Value))
			}
		}
		line = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		line = "uncaught exception: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			line += " " + d.Exception.Description
		}
		if d.URL != "" {
			line += fmt.Sprintf(" (%s:%d)", d.URL, d.LineNumber+1)
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level != log.EntryLevelError {
			return
		}
		line = fmt.Sprintf("log [%s]: %s", ev.Entry.Source, ev.Entry.Text)
		if ev.Entry.URL != "" {
			line += " (" + ev.Entry.URL + ")"
		}
	default:
		return
	}
	p.mu.Lock()
	p.lines = append(p.lines, line)
	p.mu.Unlock()
}

func (p *problemLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// saveScreenshot writes what the browser shows (gateway-docs-page.png) and the whole page
// (gateway-docs-page-full.png) into $TEST_ARTIFACTS_DIR (default: cc-test-artifacts in the
// system's temporary directory), for a person to look at; failing to take them fails nothing.
func saveScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	dir := os.Getenv("TEST_ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "cc-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	for name, shot := range map[string]chromedp.Action[[]byte]{
		"gateway-docs-page.png":      chromedp.CaptureScreenshot(),
		"gateway-docs-page-full.png": chromedp.FullScreenshot(100), // 100: PNG
	} {
		start := time.Now()
		png, err := chromedp.Run(ctx, shot)
		path := filepath.Join(dir, name)
		if err == nil {
			err = os.WriteFile(path, png, 0o644)
		}
		if err != nil {
			t.Logf("screenshot %s: %v", name, err)
			continue
		}
		t.Logf("screenshot: %s (%d KB, %s)", path, len(png)>>10, time.Since(start).Round(time.Millisecond))
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
