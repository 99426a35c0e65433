// Package browsertest drives the gateway's pages in a real browser for their tests: headless
// Chromium over the DevTools protocol (chromedp), with what the browser reports as an error
// collected, and screenshots kept for a person to look at.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium is the browser's path; without one the test fails: a page is a feature, its test is
// not optional.
func Chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not on PATH: run scripts/deps.sh (as root it installs Debian's chromium package)")
	return ""
}

// Open starts a headless browser with a window of width × height, ended with the test; ctx bounds
// it (a hung browser, not speed: a loaded 2-core machine is slow to start one and to render). The
// returned context drives its one tab, whose errors Console collects from the start.
func Open(t *testing.T, ctx context.Context, width, height int) (context.Context, *Console) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)), chromedp.UserDataDir(t.TempDir()), chromedp.DisableGPU,
		chromedp.WindowSize(width, height))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	console := &Console{}
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(console.listen))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	return bctx, console
}

// Console collects what the browser reports as an error: console.error and console.assert calls,
// uncaught exceptions, and error entries of its own log (a resource that failed to load, a
// Content-Security-Policy violation).
type Console struct {
	mu    sync.Mutex
	lines []string
}

// listen runs on chromedp's reading goroutine: it only records.
func (c *Console) listen(ev any) {
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
	c.mu.Lock()
	c.lines = append(c.lines, line)
	c.mu.Unlock()
}

// String is every error so far, one a line ("" for none).
func (c *Console) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// ArtifactsDir is where screenshots go: $CI_ARTIFACTS (the CI run's artifacts, which .ci/run
// sets), else cc-test-artifacts in the system's temporary directory.
func ArtifactsDir() string {
	if dir := os.Getenv("CI_ARTIFACTS"); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "cc-test-artifacts")
}

// Screenshot writes what the browser shows into ArtifactsDir as name (a .png), and the whole page
// too as name-full.png when full is set; failing to take them fails nothing.
func Screenshot(t *testing.T, ctx context.Context, name string, full bool) {
	t.Helper()
	dir := ArtifactsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	shots := map[string]chromedp.Action[[]byte]{name + ".png": chromedp.CaptureScreenshot()}
	if full {
		shots[name+"-full.png"] = chromedp.FullScreenshot(100) // 100: PNG
	}
	for file, shot := range shots {
		start := time.Now()
		png, err := chromedp.Run(ctx, shot)
		path := filepath.Join(dir, file)
		if err == nil {
			err = os.WriteFile(path, png, 0o644)
		}
		if err != nil {
			t.Logf("screenshot %s: %v", file, err)
			continue
		}
		t.Logf("screenshot: %s (%d KB, %s)", path, len(png)>>10, time.Since(start).Round(time.Millisecond))
	}
}

// JSString is s as a JavaScript string literal.
func JSString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
