package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"ccplatform/pkg/apperr"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
)

// NewEngine is a gin engine with the middleware every service runs: trace, request id and request
// logger, access log, the given middleware (metrics: they see the final status of every request,
// a recovered panic's 500 included), panic recovery, body limit, path parameters and a query
// string of clean text, the query parsed whole, and envelopes for unknown routes and methods.
func NewEngine(log *zap.Logger, bodyLimit int64, outer ...gin.HandlerFunc) *gin.Engine {
	if gin.Mode() != gin.ReleaseMode {
		gin.SetMode(gin.ReleaseMode)
	}
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.ContextWithFallback = true
	e.Use(Trace(), RequestContext(log), AccessLog(log))
	e.Use(outer...)
	e.Use(Recover(log), BodyLimit(bodyLimit), PathParams, WholeQuery)
	e.NoRoute(func(c *gin.Context) {
		Fail(c, apperr.NotFoundf("no route %s %s", c.Request.Method, c.Request.URL.Path))
	})
	e.NoMethod(func(c *gin.Context) {
		Fail(c, &apperr.Error{Kind: apperr.MethodNotAllowed, Message: fmt.Sprintf("method %s is not allowed on %s", c.Request.Method, c.Request.URL.Path)})
	})
	return e
}

// TrimTrailingSlash lets every route answer with and without its trailing slash: routes are
// registered without it and the path is trimmed before routing. The path is trimmed as it was
// sent: an escaped slash (%2F) at its end belongs to the last segment and stays, so that a
// parameter of "/" is refused as that parameter (PathParams), not routed as a shorter path.
func TrimTrailingSlash(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ep := r.URL.EscapedPath(); len(ep) > 1 && strings.HasSuffix(ep, "/") {
			ep = strings.TrimRight(ep, "/")
			if ep == "" {
				ep = "/"
			}
			// EscapedPath is always a valid escaping; a path without escapes needs no raw form.
			if p, err := url.PathUnescape(ep); err == nil {
				r.URL.Path, r.URL.RawPath = p, ""
				if strings.IndexByte(ep, '%') >= 0 {
					r.URL.RawPath = ep
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}
