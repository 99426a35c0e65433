// Package docs serves the public API's reference page, GET /docs/: Redoc rendering the description
// the gateway serves at /openapi.json. Redoc's standalone bundle is pinned and fetched by
// scripts/docs-assets.sh, checked in under assets/ and embedded here, so the page loads nothing
// but this gateway's own files (it works offline, and its Content-Security-Policy says so).
package docs

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

type file struct {
	name, contentType, cacheControl string
	body                            []byte
	etag                            string
}

func load(name, contentType, cacheControl string) file {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	sum := sha256.Sum256(b)
	return file{name: name, contentType: contentType, cacheControl: cacheControl, body: b,
		etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

var (
	index   = load("index.html", "text/html; charset=utf-8", "no-cache")
	asset   = load("assets/redoc.standalone.js", "text/javascript; charset=utf-8", AssetCacheControl)
	notices = load("assets/redoc.standalone.js.LICENSE.txt", "text/plain; charset=utf-8", AssetCacheControl)
	offline = load("redoc-offline.js", "text/javascript; charset=utf-8", "no-cache")
)

// Index is the page as embedded.
func Index() []byte { return index.body }

// Asset is Redoc's standalone bundle as embedded.
func Asset() []byte { return asset.body }

// Handler answers GET and HEAD of Paths: /docs/ is the page, /docs is redirected to it (301) so
// that the page's relative references resolve the same either way.
func Handler() http.Handler { return http.HandlerFunc(serve) }

func serve(w http.ResponseWriter, r *http.Request) {
	var f file
	switch strings.TrimRight(r.URL.Path, "/") {
	case "/docs":
		if !strings.HasSuffix(sentPath(r), "/") {
			target := PagePath
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusMovedPermanently)
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
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", f.cacheControl)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("Referrer-Policy", "no-referrer")
	// ServeContent answers HEAD, If-None-Match (304) and ranges.
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
