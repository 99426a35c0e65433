// Package server assembles the gateway's HTTP handler: common middleware, the public route table
// behind authentication, rate limiting and the body limit, and envelopes for everything else.
package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"ccplatform/gateway/internal/auth"
	"ccplatform/gateway/internal/docs"
	"ccplatform/gateway/internal/proxy"
	"ccplatform/gateway/internal/ratelimit"
	"ccplatform/gateway/internal/route"
	"ccplatform/gateway/internal/wallboard"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Deps is what the handler is built from; main wires them.
type Deps struct {
	// Ops answers /livez and /readyz and counts every request; its /metrics is served elsewhere
	// (METRICS_ADDR), never on the public port.
	Ops       *ops.Ops
	Log       *zap.Logger
	Routes    []route.Route
	Upstreams route.Upstreams
	Auth      *auth.Cache
	Limiter   *ratelimit.Limiter
	// AuthFailures limits 401 answers per client address (nil: no limit).
	AuthFailures *ratelimit.Limiter
	// Streams bounds the live streams per key (nil: no bound).
	Streams *ratelimit.Streams
	Proxy   *proxy.Proxy
	// BodyLimit is the largest request body accepted, in bytes.
	BodyLimit int64
	// SpecYAML and SpecJSON are the public API's description, served without a key at
	// /openapi.yaml and /openapi.json (not served when empty). With SpecJSON the reference page
	// that renders it is served too, as public: GET /docs/ (package docs).
	SpecYAML, SpecJSON []byte
	// Health answers the health check; nil leaves it answering 501.
	Health gin.HandlerFunc
	// Forbidden counts the 403s of the route policies; nil counts nothing.
	Forbidden prometheus.Counter
	// UploadStall is the longest pause in an upload route's body (0: DefaultUploadStall).
	UploadStall time.Duration
	// OpenRoutes leaves every route open to every verified key, no route policy: only the bench's
	// gateway-nopolicy (scripts/bench) sets it, to measure what the policy costs.
	OpenRoutes bool
}

// New is the gateway's handler. Every path answers with and without its trailing slash.
func New(d Deps) (http.Handler, error) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	// Wrong method on a known path: 405 with Allow, which tells a client more than a 404 would.
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	// Routed on the path as it was sent: an escaped slash (%2F) is a character of its segment,
	// so /v2/lead/import/%2F/ is that import route with an importId of "/" (a 400 naming it),
	// not a shorter path to another route. Parameters are decoded before anything reads them.
	e.UseEscapedPath = true
	e.UnescapePathValues = true
	e.Use(web.Trace(), web.RequestContext(d.Log), web.AccessLog(d.Log), d.Ops.HTTPMetrics(), web.Recover(d.Log))
	e.NoRoute(func(c *gin.Context) {
		web.Fail(c, apperr.NotFoundf("no route %s %s", c.Request.Method, c.Request.URL.Path))
	})
	e.NoMethod(methodNotAllowed)

	d.Ops.Probes(e)
	// The description is public: an integrator reads it before having a key.
	if len(d.SpecYAML) > 0 {
		e.GET("/openapi.yaml", func(c *gin.Context) { c.Data(http.StatusOK, "application/yaml", d.SpecYAML) })
	}
	if len(d.SpecJSON) > 0 {
		e.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", d.SpecJSON) })
		// The reference page renders /openapi.json: as public, and served whenever that is.
		page := gin.WrapH(docs.Handler())
		for _, p := range docs.Paths {
			e.GET(p, page)
			e.HEAD(p, page)
		}
	}
	// The wallboard is public too: it holds no data, and asks for a key to read the live stream.
	board := gin.WrapH(wallboard.Handler())
	for _, p := range wallboard.Paths {
		e.GET(p, board)
		e.HEAD(p, board)
	}

	guards := []gin.HandlerFunc{}
	if d.AuthFailures != nil {
		guards = append(guards, ratelimit.FailedAuth(d.AuthFailures))
	}
	api := e.Group("", append(guards,
		auth.Require(d.Auth),
		ratelimit.Middleware(d.Limiter, auth.KeyOf),
		// Path parameters and query values a service would store or look up must be text its
		// database can hold: refused here, named as the route table names them, before any
		// upstream sees them.
		web.PathParams,
		// The forwarder would pass such a query on as it is, for the upstream to drop what it
		// cannot parse: a filter could vanish on the way.
		web.WholeQuery,
	)...)
	for _, r := range d.Routes {
		h, err := handlerFor(r, d)
		if err != nil {
			return nil, err
		}
		chain := []gin.HandlerFunc{authorize(r, d.Forbidden, d.OpenRoutes)}
		if r.BodyLimit > 0 {
			// An upload route: its body streams to the upstream (which bounds it again) however it
			// is sent, and may take longer to arrive than the server's read deadline allows.
			chain = append(chain, web.BodyLimit(r.BodyLimit), paceUpload(d.UploadStall))
		} else {
			chain = append(chain, web.BodyLimit(d.BodyLimit), bufferUnknownLength)
		}
		if r.Stream && d.Streams != nil {
			chain = append(chain, d.Streams.Middleware(auth.KeyOf))
		}
		api.Handle(r.Method, r.Path, append(chain, h)...)
	}
	return web.TrimTrailingSlash(e), nil
}

func handlerFor(r route.Route, d Deps) (gin.HandlerFunc, error) {
	if strings.HasSuffix(r.Path, "/") {
		return nil, fmt.Errorf("route %s %s: register it without the trailing slash", r.Method, r.Path)
	}
	if r.Service == route.Gateway {
		if d.Health != nil {
			return d.Health, nil
		}
		return healthNotReady, nil
	}
	base, ok := d.Upstreams[r.Service]
	if !ok {
		return notDeployed(r.Service), nil
	}
	return d.Proxy.Handler(proxy.Target{Service: string(r.Service), Base: base, Path: r.UpstreamPath, Stream: r.Stream,
		Upload: r.BodyLimit > 0}), nil
}

// authorize enforces the route's policy on the verified caller before anything is forwarded: a
// group the route does not allow, or a key narrowed by scopes that lack the route's, is a 403.
// open lets every verified key through (Deps.OpenRoutes).
func authorize(r route.Route, forbidden prometheus.Counter, open bool) gin.HandlerFunc {
	if open {
		return func(c *gin.Context) { c.Next() }
	}
	p := r.Policy
	op := r.Method + " " + r.Path + "/"
	allowed := make(map[access.Group]bool, len(p.Groups))
	for _, g := range p.Groups {
		allowed[g] = true
	}
	narrowed := apperr.New(apperr.Forbidden, "X-Api-Key: a key narrowed by scopes cannot manage API keys")
	noScope := apperr.New(apperr.Forbidden, "X-Api-Key: the key's scopes do not include %s, which %s needs", p.Scope, op)
	refuse := func(c *gin.Context, err error) {
		if forbidden != nil {
			forbidden.Inc()
		}
		web.Fail(c, err)
	}
	return func(c *gin.Context) {
		id, _ := auth.FromContext(c.Request.Context())
		switch g := access.Group(id.AccessGroup); {
		case !allowed[g]:
			name := string(g)
			if g == access.None {
				name = "(none)"
			}
			refuse(c, apperr.New(apperr.Forbidden, "the %s access group may not call %s", name, op))
		case p.FullKey && len(id.Scopes) > 0:
			refuse(c, narrowed)
		case p.Scope != "" && !id.HasScope(string(p.Scope)):
			refuse(c, noScope)
		default:
			c.Next()
		}
	}
}

// notDeployed answers the routes of a service whose URL is not configured.
func notDeployed(svc route.Service) gin.HandlerFunc {
	err := apperr.New(apperr.NotImplemented, "%s service is not deployed", svc)
	return func(c *gin.Context) { web.Fail(c, err) }
}

// healthNotReady answers the health check of a handler built without one.
func healthNotReady(c *gin.Context) {
	web.Fail(c, apperr.New(apperr.NotImplemented, "health check is not available yet"))
}

func methodNotAllowed(c *gin.Context) {
	web.Fail(c, apperr.New(apperr.MethodNotAllowed, "method %s is not allowed on %s", c.Request.Method, c.Request.URL.Path))
}

// An upload route's body may take uploadTime to arrive, with no pause longer than
// DefaultUploadStall: a backstop above the service's own bounds (lead-api's IMPORT_STALL_TIMEOUT,
// 10 s by default, answers first, in its words), so that a client gone quiet holds neither its
// connection nor the upstream's for the whole uploadTime.
const (
	uploadTime         = 5 * time.Minute
	DefaultUploadStall = 30 * time.Second
)

// paceUpload bounds an upload's body by stall and uploadTime instead of the server's read
// timeout, and gives its answer as long again.
func paceUpload(stall time.Duration) gin.HandlerFunc {
	if stall <= 0 {
		stall = DefaultUploadStall
	}
	return func(c *gin.Context) {
		now := time.Now()
		// An error means the writer cannot change deadlines (a test recorder): nothing to lift.
		_ = http.NewResponseController(c.Writer).SetWriteDeadline(now.Add(2 * uploadTime))
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			c.Request.Body = web.NewPacedBody(c.Writer, c.Request.Body, stall, now.Add(uploadTime))
		}
		c.Next()
	}
}

// bufferUnknownLength reads a body of unknown length (chunked) here, under the body limit, so an
// oversized one is refused with 413 before any upstream sees it and the upstream gets a plain
// Content-Length. Bodies of known length are streamed as they are.
func bufferUnknownLength(c *gin.Context) {
	if c.Request.ContentLength >= 0 || c.Request.Body == nil || c.Request.Body == http.NoBody {
		c.Next()
		return
	}
	b, err := web.ReadBody(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	c.Request.ContentLength = int64(len(b))
	c.Request.TransferEncoding = nil
	c.Next()
}
