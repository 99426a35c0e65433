// Package staticfiles serves the gateway's pages for people (the API reference, the wallboard):
// files embedded at build time, each answered with its type, an ETag of its content, its caching
// rule and its page's Content-Security-Policy.
package staticfiles

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// File is one embedded file and how it is answered.
type File struct {
	name, contentType, cacheControl string
	body                            []byte
	etag                            string
}

// Load reads name from fsys, an embed.FS of the binary: a file missing from it is a build
// mistake, so Load panics.
func Load(fsys fs.FS, name, contentType, cacheControl string) File {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return File{name: name, contentType: contentType, cacheControl: cacheControl, body: b,
		etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// Body is the file's content.
func (f File) Body() []byte { return f.body }

// Serve answers r with f under the Content-Security-Policy csp. ServeContent answers HEAD,
// If-None-Match (304) and ranges.
func (f File) Serve(w http.ResponseWriter, r *http.Request, csp string) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", f.cacheControl)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", csp)
	h.Set("Referrer-Policy", "no-referrer")
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
}

// RedirectToPage sends a request for page without its trailing slash to page (301, the query
// kept), so that the page's relative references resolve the same either way; it reports whether
// it did. A router that trims trailing slashes sees both paths alike: the path the client sent
// tells them apart.
func RedirectToPage(w http.ResponseWriter, r *http.Request, page string) bool {
	if strings.HasSuffix(sentPath(r), "/") {
		return false
	}
	target := page
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusMovedPermanently)
	return true
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
