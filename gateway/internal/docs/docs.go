// Package docs serves the public API's reference page, GET /docs/: Redoc rendering the description
// the gateway serves at /openapi.json. Redoc's standalone bundle is pinned and fetched by
// scripts/docs-assets.sh, checked in under assets/ and embedded here, so the page loads nothing
// but this gateway's own files (it works offline, and its Content-Security-Policy says so).
package docs

import (
	"ccplatform/gateway/internal/staticfiles"
	"embed"
	"net/http"
	"strings"
)

//go:embed index.html redoc-offline.js assets/redoc.standalone.js assets/redoc.standalone.js.LICENSE.txt
var files embed.FS

// The page and its files. A router that trims trailing slashes sees /docs for both /docs and
// /docs/: the handler tells them apart by the path the client sent.
const (
	PagePath    = "/docs/"
	AssetPath   = "/docs/redoc.standalone.js"
	NoticesPath = "/docs/redoc.standalone.js.LICENSE.txt"
	// OfflinePath keeps Redoc from asking a CDN for its logo (see redoc-offline.js).
	OfflinePath = "/docs/redoc-offline.js"
)

// Paths are the paths to route to Handler, as a router sees them once trailing slashes are
// trimmed.
var Paths = []string{"/docs", AssetPath, NoticesPath, OfflinePath}

// ContentSecurityPolicy lets the page run only this gateway's scripts and fetch only its
// description, and nothing else: the least Redoc renders with (the browser test shows no
// violation). Redoc's search runs in a worker made from a blob: URL, its styles are <style>
// elements it injects (style-src 'unsafe-inline'; no stylesheet is loaded), its icons are data:
// images. The page cannot be framed, and has no forms or base URL to hijack.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; connect-src 'self'; " +
	"worker-src blob:; style-src 'unsafe-inline'; img-src data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// AssetCacheControl lets browsers and proxies keep the bundle for a day and then revalidate it by
// its ETag; the page itself is revalidated every time.
const AssetCacheControl = "public, max-age=86400"

var (
	index   = staticfiles.Load(files, "index.html", "text/html; charset=utf-8", "no-cache")
	asset   = staticfiles.Load(files, "assets/redoc.standalone.js", "text/javascript; charset=utf-8", AssetCacheControl)
	notices = staticfiles.Load(files, "assets/redoc.standalone.js.LICENSE.txt", "text/plain; charset=utf-8", AssetCacheControl)
	offline = staticfiles.Load(files, "redoc-offline.js", "text/javascript; charset=utf-8", "no-cache")
)

// Index is the page as embedded.
func Index() []byte { return index.Body() }

// Asset is Redoc's standalone bundle as embedded.
func Asset() []byte { return asset.Body() }

// Handler answers GET and HEAD of Paths: /docs/ is the page, /docs is redirected to it (301) so
// that the page's relative references resolve the same either way.
func Handler() http.Handler { return http.HandlerFunc(serve) }

func serve(w http.ResponseWriter, r *http.Request) {
	var f staticfiles.File
	switch strings.TrimRight(r.URL.Path, "/") {
	case "/docs":
		if staticfiles.RedirectToPage(w, r, PagePath) {
			return
		}
		f = index
	case AssetPath:
		f = asset
	case NoticesPath:
		f = notices
	case OfflinePath:
		f = offline
	default:
		http.NotFound(w, r)
		return
	}
	f.Serve(w, r, ContentSecurityPolicy)
}
