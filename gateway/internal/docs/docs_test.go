package docs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"ccplatform/gateway/internal/docs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// get sends one request to the gateway's handler, without an API key and without following
// redirects.
func get(t *testing.T, srv *httptest.Server, method, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestDocsPageAndItsFiles(t *testing.T) {
	srv := httptest.NewServer(gatewayHandler(t))
	t.Cleanup(srv.Close)

	resp, body := get(t, srv, http.MethodGet, "/docs/", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "no API key needed")
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, docs.ContentSecurityPolicy, resp.Header.Get("Content-Security-Policy"))
	assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, docs.Index(), body)
	assert.NotEmpty(t, resp.Header.Get("X-Request-Id"), "through the gateway's common middleware")

	page := string(body)
	assert.Contains(t, page, `<script src="`+docs.AssetPath+`"></script>`)
	assert.Contains(t, page, `<script src="`+docs.OfflinePath+`"></script>`)
	assert.Contains(t, page, `spec-url="/openapi.json"`)
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, page, "the page loads nothing from elsewhere")

	resp, body = get(t, srv, http.MethodGet, docs.AssetPath, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/javascript; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, docs.AssetCacheControl, resp.Header.Get("Cache-Control"))
	assert.True(t, bytes.Equal(docs.Asset(), body), "the bundle served is the embedded one (%d bytes, got %d)", len(docs.Asset()), len(body))
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)
	resp, body = get(t, srv, http.MethodGet, docs.AssetPath, http.Header{"If-None-Match": {etag}})
	assert.Equal(t, http.StatusNotModified, resp.StatusCode, "revalidated by its ETag")
	assert.Empty(t, body)

	for path, contentType := range map[string]string{
		docs.NoticesPath: "text/plain; charset=utf-8",
		docs.OfflinePath: "text/javascript; charset=utf-8",
	} {
		resp, body = get(t, srv, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, contentType, resp.Header.Get("Content-Type"), path)
		assert.NotEmpty(t, body, path)
	}

	resp, body = get(t, srv, http.MethodHead, "/docs/", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, body)
	resp, _ = get(t, srv, http.MethodPost, "/docs/", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, _ = get(t, srv, http.MethodGet, "/docs/index.html", nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "only the page and its files")
}

func TestDocsRedirectsToTheSlash(t *testing.T) {
	srv := httptest.NewServer(gatewayHandler(t))
	t.Cleanup(srv.Close)
	for path, location := range map[string]string{"/docs": "/docs/", "/docs?x=1": "/docs/?x=1"} {
		resp, _ := get(t, srv, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode, path)
		assert.Equal(t, location, resp.Header.Get("Location"), path)
	}
	// Without the gateway's slash trimming in front, the handler answers the same.
	rec := httptest.NewRecorder()
	docs.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs", nil))
	assert.Equal(t, http.StatusMovedPermanently, rec.Code)
	rec = httptest.NewRecorder()
	docs.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs/", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
}

// The embedded bundle is the one scripts/docs-assets.sh pins (its sha256), with its licence and
// the record of its version beside it.
func TestAssetIsThePinnedRedoc(t *testing.T) {
	script, err := os.ReadFile("../../../scripts/docs-assets.sh")
	require.NoError(t, err)
	version := regexp.MustCompile(`(?m)^REDOC_VERSION=(\S+)$`).FindSubmatch(script)
	sum := regexp.MustCompile(`(?m)^REDOC_SHA256=([0-9a-f]{64})$`).FindSubmatch(script)
	require.NotNil(t, version, "REDOC_VERSION in scripts/docs-assets.sh")
	require.NotNil(t, sum, "REDOC_SHA256 in scripts/docs-assets.sh")

	got := sha256.Sum256(docs.Asset())
	assert.Equal(t, string(sum[1]), hex.EncodeToString(got[:]),
		"assets/redoc.standalone.js is not the pinned bundle: run scripts/docs-assets.sh")
	assert.True(t, bytes.HasPrefix(docs.Asset(), []byte("/*! For license information please see redoc.standalone.js.LICENSE.txt */")))

	record, err := os.ReadFile("assets/VERSION")
	require.NoError(t, err)
	assert.Contains(t, string(record), "redoc "+string(version[1])+" ")
	assert.Contains(t, string(record), "sha256 "+string(sum[1]))
	licence, err := os.ReadFile("assets/LICENSE.redoc")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(licence), "The MIT License (MIT)"), "Redoc's licence is kept beside it")
}
