// Package wallboard serves the wallboard, GET /wallboard/: a page showing the report service's
// live stream (GET /v2/report/live/) to a person, per order: the agents by state with the time in
// it, the calls in flight, the dial level and the answer and abandon rates against the limit. It
// is plain HTML, CSS and JavaScript embedded here: no build step, no framework, nothing loaded
// from elsewhere. The page asks for an API key and reads the stream with fetch (an EventSource
// cannot send X-Api-Key), so the stream's access rules are the gateway's as for any client.
package wallboard

import (
	"ccplatform/gateway/internal/staticfiles"
	"embed"
	"net/http"
	"strings"
)

//go:embed index.html wallboard.js wallboard.css
var files embed.FS

// The page and its files. A router that trims trailing slashes sees /wallboard for both
// /wallboard and /wallboard/: the handler tells them apart by the path the client sent.
const (
	PagePath   = "/wallboard/"
	ScriptPath = "/wallboard/wallboard.js"
	StylePath  = "/wallboard/wallboard.css"
)

// Paths are the paths to route to Handler, as a router sees them once trailing slashes are
// trimmed.
var Paths = []string{"/wallboard", ScriptPath, StylePath}

// ContentSecurityPolicy lets the page run its own script and style and talk to this gateway
// only; it cannot be framed and has no form to send elsewhere (the key form is handled by the
// script).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Each file is revalidated every time (by its ETag): a new gateway's page is used at once.
var (
	page   = staticfiles.Load(files, "index.html", "text/html; charset=utf-8", "no-cache")
	script = staticfiles.Load(files, "wallboard.js", "text/javascript; charset=utf-8", "no-cache")
	style  = staticfiles.Load(files, "wallboard.css", "text/css; charset=utf-8", "no-cache")
)

// Handler answers GET and HEAD of Paths: /wallboard/ is the page, /wallboard is redirected to it
// (301) so that the page's relative references resolve the same either way.
func Handler() http.Handler { return http.HandlerFunc(serve) }

func serve(w http.ResponseWriter, r *http.Request) {
	var f staticfiles.File
	switch strings.TrimRight(r.URL.Path, "/") {
	case "/wallboard":
		if staticfiles.RedirectToPage(w, r, PagePath) {
			return
		}
		f = page
	case ScriptPath:
		f = script
	case StylePath:
		f = style
	default:
		http.NotFound(w, r)
		return
	}
	f.Serve(w, r, ContentSecurityPolicy)
}
