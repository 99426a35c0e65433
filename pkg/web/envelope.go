// Package web is how a handler of every service and the gateway reads a request and answers it:
// the response envelope, the one place where errors become statuses, JSON decoding with the
// contract's error rules, path and query parameters, and the engine with the common middleware.
// Its neighbours: pkg/identity (who the gateway verified), pkg/apitime (how instants are written),
// pkg/listquery (lists and their queries), pkg/httpserver (the server's lifecycle).
package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/logging"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
)

// Envelope is the body of every public response.
type Envelope struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// EmptyData is the `[]` that operations returning nothing put in data.
var EmptyData = json.RawMessage("[]")

// ID is the data of operations that "return id".
type ID struct {
	ID int64 `json:"id"`
}

// OK writes a 200 success envelope; nil data becomes [].
func OK(c *gin.Context, data any) {
	if data == nil {
		data = EmptyData
	}
	c.JSON(http.StatusOK, Envelope{Success: true, Data: data})
}

// OKEncoded answers 200 with the envelope around data, JSON its caller encoded already and vouches
// for: c.JSON would parse a json.Marshaler's output again to check it, which for a large answer
// (a report of 744 rows) costs as much as encoding it.
func OKEncoded(c *gin.Context, data []byte) {
	body := make([]byte, 0, len(data)+40)
	body = append(append(append(body, `{"success":true,"message":"","data":`...), data...), '}')
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}

// ValidationData is the data of a 400 validation failure.
type ValidationData struct {
	Errors apperr.FieldErrors `json:"errors"`
}

// Fail writes the envelope for err and aborts the chain. Only internal faults are logged as errors,
// with their cause; callers see a fixed sentence for those, never the cause.
func Fail(c *gin.Context, err error) {
	status, env := ErrorEnvelope(err)
	// 501 is a deployment fact (a service not deployed yet), not a fault to page anyone about.
	if status >= 500 && status != http.StatusNotImplemented {
		logging.From(c.Request.Context(), zap.NewNop()).Error("request failed", zap.Int("status", status), zap.Error(err))
	}
	if e, ok := apperr.As(err); ok && e.Kind == apperr.RateLimited {
		if c.Writer.Header().Get("Retry-After") == "" {
			c.Header("Retry-After", strconv.Itoa(1))
		}
	}
	c.AbortWithStatusJSON(status, env)
}

// unreachableMessage answers an unclassified failure to reach a dependency (apperr.Unreachable).
const unreachableMessage = "the service is unavailable now (its database cannot be reached); send the request again"

// ErrorEnvelope maps err to its status and envelope. An error nobody classified that says a
// dependency could not be reached (the database restarting) is a 503: the caller should retry,
// and a 500 would tell it the request itself is at fault.
func ErrorEnvelope(err error) (int, Envelope) {
	e, ok := apperr.As(err)
	if (!ok || e.Kind == apperr.Internal) && apperr.Unreachable(err) {
		return http.StatusServiceUnavailable, Envelope{Message: unreachableMessage, Data: EmptyData}
	}
	if !ok || e.Kind.Status() == http.StatusInternalServerError {
		return http.StatusInternalServerError, Envelope{Message: "internal error", Data: EmptyData}
	}
	env := Envelope{Message: apperr.Clip(e.Message, MaxErrorMessage), Data: EmptyData}
	if len(e.Fields) > 0 {
		fields, _ := e.Fields.Bounded()
		env.Data = ValidationData{Errors: fields}
	}
	return e.Kind.Status(), env
}

// MaxErrorMessage bounds an error answer's message, in bytes as JSON text. With the field errors
// bounded too (apperr.FieldErrors.Bounded: 20 names and rules of at most 1,280 bytes), no error
// answer's body exceeds MaxErrorBody, whatever the request made of its errors.
const MaxErrorMessage = 16 << 10

// MaxErrorBody is the most an error answer's body takes.
const MaxErrorBody = 64 << 10
