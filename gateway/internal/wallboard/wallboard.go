// Package wallboard serves the wallboard, GET /wallboard/: a page showing the report service's
// live stream (GET /v2/report/live/) to a person, per order: the agents by state with the time in
// it, the calls in flight, the dial level and the answer and abandon rates against the limit. It
// is plain HTML, CSS and JavaScript embedded here: no build step, no framework, nothing loaded
// from elsewhere. The page asks for an API key and reads the stream with fetch (an EventSource
// cannot send X-Api-Key), so the stream's access rules are the gateway's as for any client.
package wallboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"time"
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

type file struct {
	name, contentType string
	body              []byte
	etag              string
}

func load(name, contentType string) file {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	sum := sha256.Sum256(b)
	return file{name: name, contentType: contentType, body: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

var (
	page   = load("index.html", "text/html; charset=utf-8")
	script = load("wallboard.js", "text/javascript; charset=utf-8")
	style  = load("wallboard.css", "text/css; charset=utf-8")
)

// Handler answers GET and HEAD of Paths: /wallboard/ is the page, /wallboard is redirected to it
// (301) so that the page's relative references resolve the same either way.
func Handler() http.Handler { return http.HandlerFunc(serve) }

func serve(w http.ResponseWriter, r *http.Request) {
	var f file
	switch strings.TrimRight(r.URL.Path, "/") {
	case "/wallboard":
		if !strings.HasSuffix(sentPath(r), "/") {
			http.Redirect(w, r, PagePath, http.StatusMovedPermanently)
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
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	// Revalidated every time (by the ETag): a new gateway's page is used at once.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("Referrer-Policy", "no-referrer")
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
}

// sentPath is the path as the client sent it, before any middleware trimmed its trailing slash.
func sentPath(r *http.Request) string {
	if r.RequestURI != "" {
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
			return u.Path
		}
	}
	return r.URL.Path
}
