package web

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/logging"
	"ccplatform/pkg/requestid"
	"ccplatform/pkg/tracing"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

// HeaderInternalToken carries the secret that proves a request came through the gateway or
// another service.
const HeaderInternalToken = "X-Internal-Token"

// RequestContext takes the request id from the request (or makes one when it is missing or not
// requestid.Valid), echoes it on the response and puts it, and a logger naming it (and the trace
// Trace started, when it runs first), into the request's context.
func RequestContext(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader(requestid.Header)
		if !requestid.Valid(id) {
			id = uuid.NewString()
			c.Request.Header.Set(requestid.Header, id)
		}
		c.Header(requestid.Header, id)
		ctx := requestid.With(c.Request.Context(), id)
		// WithLazy encodes the field only once the request logs something; With copied the
		// logger's encoder (about a kilobyte) on every request, logged or not.
		fields := append([]zap.Field{zap.String("request_id", id)}, tracing.LogFields(ctx)...)
		ctx = logging.With(ctx, log.WithLazy(fields...))
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// AccessLog writes one structured line per request.
func AccessLog(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		l := logging.From(c.Request.Context(), log)
		// Check first: the fields are built (and allocated) only when the line is written.
		ce := l.Check(zap.InfoLevel, "request")
		if ce == nil {
			return
		}
		ce.Write(
			zap.String("method", c.Request.Method),
			zap.String("path", c.Request.URL.Path),
			zap.String("route", c.FullPath()),
			zap.Int("status", c.Writer.Status()),
			zap.Int("bytes", c.Writer.Size()),
			zap.Duration("duration", time.Since(start)),
			zap.String("user_id", c.GetHeader(identity.HeaderUserID)),
			zap.String("key_id", c.GetHeader(access.HeaderKeyID)),
		)
	}
}

// Recover turns a panic into a logged 500 envelope instead of a dropped connection.
func Recover(log *zap.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				logging.From(c.Request.Context(), log).Error("panic", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
				if !c.Writer.Written() {
					Fail(c, apperr.Wrap(apperr.Internal, fmt.Errorf("panic: %v", r), "internal error"))
				}
				c.Abort()
			}
		}()
		c.Next()
	}
}

// BodyLimit answers 413 for bodies over limit bytes, both those announced by Content-Length and
// those that only turn out too large while being read.
func BodyLimit(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			Fail(c, apperr.New(apperr.TooLarge, "body: must be at most %d bytes", limit))
			return
		}
		// A request without a body (http.NoBody) has nothing to bound.
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}

// RequireInternalToken refuses requests that do not carry the shared internal secret: services are
// reachable only through the gateway or from each other.
func RequireInternalToken(token string) gin.HandlerFunc {
	want := []byte(token)
	return func(c *gin.Context) {
		got := []byte(c.GetHeader(HeaderInternalToken))
		if len(want) == 0 || subtle.ConstantTimeCompare(got, want) != 1 {
			Fail(c, apperr.New(apperr.Unauthorized, "X-Internal-Token: missing or wrong"))
			return
		}
		c.Next()
	}
}

// PathID parses a path id that must be an integer > 0; anything else is a 400 naming the parameter.
func PathID(c *gin.Context, name string) (int64, error) {
	raw := c.Param(name)
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.Field(name, "must be an integer > 0")
	}
	return id, nil
}

// Handle adapts a handler that returns its data or an error, so each handler writes its response
// in exactly one way.
func Handle(fn func(c *gin.Context) (any, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		data, err := fn(c)
		if err != nil {
			Fail(c, err)
			return
		}
		OK(c, data)
	}
}

// ClientIP is the caller's address as the gateway forwarded it (X-Forwarded-For, then
// X-Real-IP), or nil when there is none that reads as an IP address.
func ClientIP(c *gin.Context) *string {
	for _, raw := range []string{c.GetHeader("X-Forwarded-For"), c.GetHeader("X-Real-IP")} {
		first, _, _ := strings.Cut(raw, ",")
		if ip := net.ParseIP(strings.TrimSpace(first)); ip != nil {
			s := ip.String()
			return &s
		}
	}
	return nil
}
