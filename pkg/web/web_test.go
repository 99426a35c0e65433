package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/requestid"

	"github.com/gin-gonic/gin"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// envelope is the wire form, decoded loosely so tests see exactly what a client sees.
type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func newTestEngine(t *testing.T, limit int64) (*gin.Engine, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	return NewEngine(zap.New(core), limit), logs
}

func do(t *testing.T, h http.Handler, req *http.Request) (*httptest.ResponseRecorder, envelope) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var env envelope
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &env), "body %q", w.Body.String())
	return w, env
}

func get(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }

func postJSON(path, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestOKEnvelope(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.GET("/nothing", Handle(func(*gin.Context) (any, error) { return nil, nil }))
	e.GET("/id", Handle(func(*gin.Context) (any, error) { return ID{ID: 7}, nil }))

	w, _ := do(t, e, get("/nothing"))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.JSONEq(t, `{"success":true,"message":"","data":[]}`, w.Body.String())
	assert.Contains(t, w.Header().Get("Content-Type"), "application/json")

	w, _ = do(t, e, get("/id"))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.JSONEq(t, `{"success":true,"message":"","data":{"id":7}}`, w.Body.String())
}

func TestOKEncodedIsTheSameEnvelopeAsOK(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.GET("/ok", func(c *gin.Context) { OK(c, gin.H{"list": []int{1, 2}}) })
	e.GET("/encoded", func(c *gin.Context) { OKEncoded(c, []byte(`{"list":[1,2]}`)) })
	want, _ := do(t, e, get("/ok"))
	got, _ := do(t, e, get("/encoded"))
	assert.Equal(t, http.StatusOK, got.Code)
	assert.Equal(t, want.Body.String(), got.Body.String())
	assert.Equal(t, want.Header().Get("Content-Type"), got.Header().Get("Content-Type"))
}

func TestFailEnvelopes(t *testing.T) {
	secret := errors.New(`pq: relation "orders" does not exist at main.go:12`)
	for _, tc := range []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{
			name:   "validation",
			err:    apperr.Field("phone", "must be a phone number in E.164 format"),
			status: http.StatusBadRequest,
			body:   `{"success":false,"message":"phone: must be a phone number in E.164 format","data":{"errors":{"phone":"must be a phone number in E.164 format"}}}`,
		},
		{
			name:   "several fields",
			err:    apperr.FieldErrors{"title": "is required", "code": "must be unique"}.Err(),
			status: http.StatusBadRequest,
			body:   `{"success":false,"message":"code: must be unique; title: is required","data":{"errors":{"code":"must be unique","title":"is required"}}}`,
		},
		{
			name:   "not found",
			err:    fmt.Errorf("load: %w", apperr.NotFoundf("order 7 not found")),
			status: http.StatusNotFound,
			body:   `{"success":false,"message":"order 7 not found","data":[]}`,
		},
		{
			name:   "conflict keeps message, hides cause",
			err:    apperr.Wrap(apperr.Conflict, secret, "code: already taken"),
			status: http.StatusConflict,
			body:   `{"success":false,"message":"code: already taken","data":[]}`,
		},
		{
			name:   "plain error is internal",
			err:    secret,
			status: http.StatusInternalServerError,
			body:   `{"success":false,"message":"internal error","data":[]}`,
		},
		{
			name:   "classified internal error",
			err:    apperr.Wrap(apperr.Internal, secret, "load order %d", 7),
			status: http.StatusInternalServerError,
			body:   `{"success":false,"message":"internal error","data":[]}`,
		},
		{
			name:   "unknown kind",
			err:    &apperr.Error{Kind: apperr.Kind(42), Message: "secret detail"},
			status: http.StatusInternalServerError,
			body:   `{"success":false,"message":"internal error","data":[]}`,
		},
		{
			name:   "unavailable",
			err:    apperr.Wrap(apperr.Unavailable, secret, "user service is unavailable"),
			status: http.StatusServiceUnavailable,
			body:   `{"success":false,"message":"user service is unavailable","data":[]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, logs := newTestEngine(t, DefaultBodyLimit)
			e.GET("/x", Handle(func(*gin.Context) (any, error) { return map[string]int{"never": 1}, tc.err }))
			req := get("/x")
			req.Header.Set(requestid.Header, "req-1")
			w, _ := do(t, e, req)
			assert.Equal(t, tc.status, w.Code)
			assert.JSONEq(t, tc.body, w.Body.String())
			assert.NotContains(t, w.Body.String(), "pq:")
			assert.NotContains(t, w.Body.String(), "main.go")
			failures := logs.FilterMessage("request failed").All()
			if tc.status >= 500 {
				require.Len(t, failures, 1, "5xx are logged")
				assert.Equal(t, "req-1", failures[0].ContextMap()["request_id"])
				assert.Contains(t, failures[0].ContextMap()["error"], tc.err.Error())
			} else {
				assert.Empty(t, failures, "4xx are not logged as errors")
			}
		})
	}
}

func TestRateLimitedSetsRetryAfter(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.GET("/default", Handle(func(*gin.Context) (any, error) { return nil, apperr.New(apperr.RateLimited, "slow down") }))
	e.GET("/explicit", Handle(func(c *gin.Context) (any, error) {
		c.Header("Retry-After", "7")
		return nil, apperr.New(apperr.RateLimited, "slow down")
	}))
	w, env := do(t, e, get("/default"))
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	assert.Equal(t, "slow down", env.Message)
	w, _ = do(t, e, get("/explicit"))
	assert.Equal(t, "7", w.Header().Get("Retry-After"))
}

func TestUnknownRouteAndMethod(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.GET("/x", Handle(func(*gin.Context) (any, error) { return nil, nil }))
	w, env := do(t, e, get("/nope"))
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.False(t, env.Success)
	assert.JSONEq(t, `[]`, string(env.Data))

	w, env = do(t, e, postJSON("/x", `{}`))
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
	assert.False(t, env.Success)
	assert.Contains(t, env.Message, "POST")
}

type createBody struct {
	Title  string                  `json:"title"`
	Limit  int                     `json:"limit"`
	Small  int32                   `json:"small,omitempty"`
	Smalls []int32                 `json:"smalls,omitempty"`
	Tags   []string                `json:"tags"`
	Phone  optional.Value[string]  `json:"phone"`
	Amount optional.Value[float64] `json:"amount"`
	Owner  struct {
		ID optional.Value[int64] `json:"id"`
	} `json:"owner"`
}

func decodeEngine(t *testing.T, limit int64) *gin.Engine {
	e, _ := newTestEngine(t, limit)
	e.POST("/decode", Handle(func(c *gin.Context) (any, error) {
		var b createBody
		if err := DecodeJSON(c, &b); err != nil {
			return nil, err
		}
		return b, nil
	}))
	return e
}

func TestDecodeJSON(t *testing.T) {
	e := decodeEngine(t, DefaultBodyLimit)
	for _, tc := range []struct {
		name        string
		contentType string // "-" for none
		body        string
		status      int
		message     string
		errors      map[string]string
	}{
		{name: "ok", contentType: "application/json", body: `{"title":"a","limit":3,"phone":null}`, status: 200},
		{name: "charset", contentType: "application/json; charset=utf-8", body: `{"title":"a"}`, status: 200},
		{name: "charset upper case", contentType: "Application/JSON; Charset=UTF-8", body: `{"title":"a"}`, status: 200},
		{name: "json suffix", contentType: "application/merge-patch+json", body: `{"title":"a"}`, status: 415},
		{name: "json patch", contentType: "application/json-patch+json", body: `{"title":"a"}`, status: 415},
		{name: "latin1", contentType: "application/json; charset=latin1", body: `{"title":"a"}`, status: 415},
		{name: "other parameter", contentType: "application/json; version=2", body: `{"title":"a"}`, status: 415},
		{name: "no content type", contentType: "-", body: `{"title":"a"}`, status: 415, message: "Content-Type: must be application/json (charset utf-8, if any)"},
		{name: "unknown fields ignored", contentType: "application/json", body: `{"title":"a","whatever":{"x":[1,2]}}`, status: 200},
		{name: "text", contentType: "text/plain", body: `{"title":"a"}`, status: 415, message: "Content-Type: must be application/json (charset utf-8, if any)"},
		{name: "form", contentType: "application/x-www-form-urlencoded", body: `title=a`, status: 415},
		{name: "bad media type", contentType: ";;", body: `{}`, status: 415},
		{name: "empty", contentType: "application/json", body: ``, status: 400, errors: map[string]string{"body": "must be a JSON object"}},
		{name: "blank", contentType: "application/json", body: " \n\t", status: 400, errors: map[string]string{"body": "must be a JSON object"}},
		{name: "array", contentType: "application/json", body: `[{"title":"a"}]`, status: 400, errors: map[string]string{"body": "must be a JSON object"}},
		{name: "string", contentType: "application/json", body: `"a"`, status: 400, errors: map[string]string{"body": "must be a JSON object"}},
		{name: "null", contentType: "application/json", body: `null`, status: 400, errors: map[string]string{"body": "must be a JSON object"}},
		{name: "truncated", contentType: "application/json", body: `{"title":`, status: 400},
		{name: "malformed", contentType: "application/json", body: `{"title" "a"}`, status: 400},
		{name: "trailing garbage", contentType: "application/json", body: `{"title":"a"} x`, status: 400},
		{name: "wrong type", contentType: "application/json", body: `{"limit":"ten"}`, status: 400, message: "limit: must be an integer", errors: map[string]string{"limit": "must be an integer"}},
		{name: "wrong type string", contentType: "application/json", body: `{"title":5}`, status: 400, errors: map[string]string{"title": "must be a string"}},
		{name: "wrong type array", contentType: "application/json", body: `{"tags":"a"}`, status: 400, errors: map[string]string{"tags": "must be an array"}},
		{name: "wrong type optional", contentType: "application/json", body: `{"phone":12345}`, status: 400, message: "phone: must be a string", errors: map[string]string{"phone": "must be a string"}},
		{name: "wrong type optional number", contentType: "application/json", body: `{"amount":"12"}`, status: 400, errors: map[string]string{"amount": "must be a number"}},
		{name: "wrong type nested optional", contentType: "application/json", body: `{"owner":{"id":true}}`, status: 400, errors: map[string]string{"owner.id": "must be an integer"}},
		{name: "fraction for integer", contentType: "application/json", body: `{"limit":1.5}`, status: 400, errors: map[string]string{"limit": "must be an integer"}},
		{name: "NUL", contentType: "application/json", body: `{"title":"a\u0000b"}`, status: 400, message: "title: " + ruleNUL, errors: map[string]string{"title": ruleNUL}},
		{name: "NUL nested", contentType: "application/json", body: `{"owner":{"id":1},"extra":{"x":["ok","\u0000"]}}`, status: 400, errors: map[string]string{"extra.x[1]": ruleNUL}},
		{name: "NUL in a member name", contentType: "application/json", body: `{"a\u0000":1}`, status: 400, errors: map[string]string{"body": "member names " + ruleNUL}},
		{name: "NUL in several fields", contentType: "application/json", body: `{"title":"\u0000","tags":["\u0000"]}`, status: 400, errors: map[string]string{"title": ruleNUL, "tags[0]": ruleNUL}},
		{name: "escaped backslash before u0000 is text", contentType: "application/json", body: `{"title":"\\u0000"}`, status: 200},
		{name: "invalid UTF-8", contentType: "application/json", body: "{\"title\":\"a\xffb\"}", status: 400, errors: map[string]string{"title": "must be valid UTF-8 text"}},
		{name: "lone surrogate", contentType: "application/json", body: `{"title":"\ud800"}`, status: 400, errors: map[string]string{"title": "must be valid UTF-8 text"}},
		{name: "surrogate pair", contentType: "application/json", body: `{"title":"\ud83d\ude00"}`, status: 200},
		{name: "duplicate member", contentType: "application/json", body: `{"title":"a","title":"b"}`, status: 400, errors: map[string]string{"title": "must appear only once"}},
		{name: "member names match exactly", contentType: "application/json", body: `{"TITLE":5,"Limit":"x","owner":{"ID":true}}`, status: 200},
		{name: "int32 out of range", contentType: "application/json", body: `{"small":2147483648}`, status: 400, errors: map[string]string{"small": "must be an integer from -2147483648 to 2147483647"}},
		{name: "int64 out of range", contentType: "application/json", body: `{"limit":9223372036854775808}`, status: 400, errors: map[string]string{"limit": "must be an integer"}},
		{name: "array element out of range", contentType: "application/json", body: `{"smalls":[1,-2147483649]}`, status: 400, errors: map[string]string{"smalls[1]": "must be an integer from -2147483648 to 2147483647"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/decode", strings.NewReader(tc.body))
			if tc.contentType != "-" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			w, env := do(t, e, req)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			assert.Equal(t, tc.status == 200, env.Success)
			if tc.status == 200 {
				assert.Empty(t, env.Message)
				return
			}
			assert.NotEmpty(t, env.Message)
			assert.NotContains(t, env.Message, "createBody", "no Go type names")
			assert.NotContains(t, env.Message, "json:", "no decoder internals")
			if tc.message != "" {
				assert.Equal(t, tc.message, env.Message)
			}
			if tc.errors != nil {
				var data ValidationData
				require.NoError(t, json.Unmarshal(env.Data, &data))
				assert.Equal(t, apperr.FieldErrors(tc.errors), data.Errors)
				for f, r := range tc.errors {
					assert.Contains(t, env.Message, f+": "+r)
				}
			}
		})
	}
}

func TestDecodeJSONKeepsTriState(t *testing.T) {
	e := decodeEngine(t, DefaultBodyLimit)
	w, env := do(t, e, postJSON("/decode", `{"title":"t","phone":null,"amount":2.5}`))
	require.Equal(t, http.StatusOK, w.Code)
	assert.JSONEq(t, `{"title":"t","limit":0,"tags":null,"phone":null,"amount":2.5,"owner":{"id":null}}`, string(env.Data))
}

func TestReadBodyIsRepeatable(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.POST("/twice", Handle(func(c *gin.Context) (any, error) {
		a, err := ReadBody(c)
		if err != nil {
			return nil, err
		}
		b, err := ReadBody(c)
		if err != nil {
			return nil, err
		}
		rest, err := io.ReadAll(c.Request.Body)
		if err != nil {
			return nil, err
		}
		return map[string]string{"a": string(a), "b": string(b), "rest": string(rest)}, nil
	}))
	_, env := do(t, e, postJSON("/twice", `{"k":1}`))
	assert.JSONEq(t, `{"a":"{\"k\":1}","b":"{\"k\":1}","rest":"{\"k\":1}"}`, string(env.Data))
}

func TestBodyLimitByContentLength(t *testing.T) {
	e := decodeEngine(t, 32)
	body := `{"title":"` + strings.Repeat("x", 64) + `"}`
	w, env := do(t, e, postJSON("/decode", body))
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	assert.Equal(t, "body: must be at most 32 bytes", env.Message)

	w, _ = do(t, e, postJSON("/decode", `{"title":"ok"}`))
	assert.Equal(t, http.StatusOK, w.Code)
}

// chunked hides the length of a body so that it is sent chunked, without Content-Length.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

func TestBodyLimitChunkedThroughDecodeJSON(t *testing.T) {
	e := decodeEngine(t, 1024)
	var encodings []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encodings = r.TransferEncoding
		e.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	send := func(size int) (*http.Response, envelope) {
		body := `{"title":"` + strings.Repeat("x", size) + `"}`
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/decode", chunked{strings.NewReader(body)})
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, []string{"chunked"}, encodings, "the body was sent without Content-Length")
		var env envelope
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		return resp, env
	}
	resp, env := send(4096)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Equal(t, "body: must be at most 1024 bytes", env.Message)

	resp, env = send(100)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, env.Success)
}

func TestTrimTrailingSlash(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.GET("/v2/order/detail/:orderId", Handle(func(c *gin.Context) (any, error) {
		id, err := PathID(c, "orderId")
		return map[string]any{"id": id, "q": c.Query("q")}, err
	}))
	e.GET("/", Handle(func(*gin.Context) (any, error) { return "root", nil }))
	h := TrimTrailingSlash(e)
	for path, want := range map[string]string{
		"/v2/order/detail/5":       `{"id":5,"q":""}`,
		"/v2/order/detail/5/":      `{"id":5,"q":""}`,
		"/v2/order/detail/5//":     `{"id":5,"q":""}`,
		"/v2/order/detail/5/?q=a/": `{"id":5,"q":"a/"}`,
		"/":                        `"root"`,
	} {
		w, env := do(t, h, get(path))
		assert.Equal(t, http.StatusOK, w.Code, path)
		assert.JSONEq(t, want, string(env.Data), path)
	}
	w, _ := do(t, e, get("/v2/order/detail/5/"))
	assert.Equal(t, http.StatusNotFound, w.Code, "the engine alone neither redirects nor matches")
}

func TestPathID(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.GET("/items/:id", Handle(func(c *gin.Context) (any, error) {
		id, err := PathID(c, "id")
		if err != nil {
			return nil, err
		}
		return ID{ID: id}, nil
	}))
	for raw, ok := range map[string]bool{"1": true, "9223372036854775807": true, "0": false, "-1": false, "abc": false, "1.5": false, "9223372036854775808": false, "%20": false} {
		w, env := do(t, e, get("/items/"+raw))
		if ok {
			assert.Equal(t, http.StatusOK, w.Code, raw)
			assert.JSONEq(t, `{"id":`+raw+`}`, string(env.Data))
			continue
		}
		assert.Equal(t, http.StatusBadRequest, w.Code, raw)
		assert.Equal(t, "id: must be an integer > 0", env.Message, raw)
		assert.JSONEq(t, `{"errors":{"id":"must be an integer > 0"}}`, string(env.Data), raw)
	}
}

func TestRequireInternalToken(t *testing.T) {
	build := func(token string) *gin.Engine {
		e, _ := newTestEngine(t, DefaultBodyLimit)
		e.Use(RequireInternalToken(token))
		e.GET("/internal/x", Handle(func(*gin.Context) (any, error) { return nil, nil }))
		return e
	}
	e := build("s3cret")
	for _, tc := range []struct {
		token  string
		status int
	}{{"s3cret", 200}, {"", 401}, {"wrong", 401}, {"s3cret ", 401}, {"s3cre", 401}} {
		req := get("/internal/x")
		if tc.token != "" {
			req.Header.Set(HeaderInternalToken, tc.token)
		}
		w, env := do(t, e, req)
		assert.Equal(t, tc.status, w.Code, tc.token)
		if tc.status != 200 {
			assert.Equal(t, "X-Internal-Token: missing or wrong", env.Message)
		}
	}
	// A service started without a token refuses everything rather than accepting everyone.
	req := get("/internal/x")
	req.Header.Set(HeaderInternalToken, "")
	w, _ := do(t, build(""), req)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
}

func TestRequestContext(t *testing.T) {
	e, logs := newTestEngine(t, DefaultBodyLimit)
	e.GET("/rid", Handle(func(c *gin.Context) (any, error) {
		ctx := c.Request.Context()
		return map[string]string{"ctx": requestid.From(ctx), "header": c.GetHeader(requestid.Header), "gin": requestid.From(c)}, nil
	}))

	req := get("/rid")
	req.Header.Set(requestid.Header, "abc-123")
	w, env := do(t, e, req)
	assert.Equal(t, "abc-123", w.Header().Get(requestid.Header))
	assert.JSONEq(t, `{"ctx":"abc-123","header":"abc-123","gin":"abc-123"}`, string(env.Data))

	w, env = do(t, e, get("/rid"))
	made := w.Header().Get(requestid.Header)
	assert.Len(t, made, 36, "a UUID is made")
	assert.JSONEq(t, `{"ctx":"`+made+`","header":"`+made+`","gin":"`+made+`"}`, string(env.Data))

	req = get("/rid")
	req.Header.Set(requestid.Header, strings.Repeat("a", 200))
	w, _ = do(t, e, req)
	assert.Len(t, w.Header().Get(requestid.Header), 36, "an over-long id is replaced")

	// Unknown routes carry the id too.
	req = get("/nope")
	req.Header.Set(requestid.Header, "nf-1")
	w, _ = do(t, e, req)
	assert.Equal(t, "nf-1", w.Header().Get(requestid.Header))

	// The access log line names the request.
	lines := logs.FilterMessage("request").FilterField(zap.String("request_id", "abc-123")).All()
	require.Len(t, lines, 1)
	assert.Equal(t, int64(200), lines[0].ContextMap()["status"])
	assert.Equal(t, "/rid", lines[0].ContextMap()["route"])
}

func TestRecover(t *testing.T) {
	e, logs := newTestEngine(t, DefaultBodyLimit)
	e.GET("/panic", func(*gin.Context) { panic("boom: secret detail") })
	e.GET("/panic-after-write", func(c *gin.Context) {
		c.JSON(http.StatusOK, Envelope{Success: true, Data: EmptyData})
		panic("late")
	})
	req := get("/panic")
	req.Header.Set(requestid.Header, "p-1")
	w, env := do(t, e, req)
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.Equal(t, envelope{Success: false, Message: "internal error", Data: json.RawMessage(`[]`)}, env)
	assert.NotContains(t, w.Body.String(), "secret")
	panics := logs.FilterMessage("panic").All()
	require.Len(t, panics, 1)
	assert.Equal(t, "p-1", panics[0].ContextMap()["request_id"])

	w, env = do(t, e, get("/panic-after-write"))
	assert.Equal(t, http.StatusOK, w.Code, "a response already sent is not overwritten")
	assert.True(t, env.Success)

	// The server keeps serving after a panic.
	srv := httptest.NewServer(e)
	defer srv.Close()
	for range 2 {
		resp, err := http.Get(srv.URL + "/panic")
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	}
}

func TestErrorEnvelopeDirect(t *testing.T) {
	status, env := ErrorEnvelope(apperr.New(apperr.Forbidden, "order 3: not yours"))
	assert.Equal(t, http.StatusForbidden, status)
	out, err := json.Marshal(env)
	require.NoError(t, err)
	assert.JSONEq(t, `{"success":false,"message":"order 3: not yours","data":[]}`, string(out))
}

func TestWholeQuery(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.GET("/list", Handle(func(c *gin.Context) (any, error) {
		return map[string]string{"limit": c.Query("limit")}, nil
	}))
	var pad strings.Builder
	for i := range MaxQueryParams {
		fmt.Fprintf(&pad, "&x%d=1", i)
	}
	for _, tc := range []struct {
		name, query string
		status      int
	}{
		{"plain", "limit=1&orderIds[]=2", 200},
		{"at the bound", "limit=1" + pad.String()[:strings.LastIndex(pad.String(), "&")], 200},
		{"one too many", "limit=1" + pad.String(), 400},
		{"semicolon", "limit=1;x=1", 400},
		{"bad escape", "limit=1&x=%zz", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, env := do(t, e, httptest.NewRequest(http.MethodGet, "/list?"+tc.query, nil))
			require.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.status == 200 {
				assert.JSONEq(t, `{"limit":"1"}`, string(env.Data))
				return
			}
			var data ValidationData
			require.NoError(t, json.Unmarshal(env.Data, &data))
			assert.Contains(t, data.Errors, "query")
		})
	}
}

func TestErrorEnvelopeOfAnUnreachableDatabaseIs503(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("idempotency claim: %w", &pq.Error{Code: "57P01", Message: "terminating connection due to administrator command"}),
		apperr.Wrap(apperr.Internal, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, "load order"),
	} {
		status, env := ErrorEnvelope(err)
		assert.Equal(t, http.StatusServiceUnavailable, status, "%v", err)
		assert.Equal(t, unreachableMessage, env.Message, "the cause stays in the logs")
	}
	status, _ := ErrorEnvelope(fmt.Errorf("insert: %w", &pq.Error{Code: "23502"}))
	assert.Equal(t, http.StatusInternalServerError, status, "a database error about the data stays a 500")
	status, _ = ErrorEnvelope(apperr.New(apperr.Conflict, "taken"))
	assert.Equal(t, http.StatusConflict, status, "a classified error keeps its kind")
}

// However many fields a request gets wrong, the answer names 20 and counts the rest, and its body
// stays within MaxErrorBody: through Fail and through WriteError alike.
func TestErrorAnswersAreBounded(t *testing.T) {
	fe := apperr.FieldErrors{}
	for i := range 100_000 {
		fe.Add(fmt.Sprintf("header column %d %s", i+1, strings.Repeat("<", 300)), strings.Repeat("\x01", 2000))
	}
	huge := []error{fe.Err(), apperr.New(apperr.Invalid, "%s", strings.Repeat("\"", 1<<20)),
		&apperr.Error{Kind: apperr.Invalid, Message: strings.Repeat("m", 1<<20), Fields: fe}}
	for i, err := range huge {
		e, _ := newTestEngine(t, DefaultBodyLimit)
		e.GET("/x", func(c *gin.Context) { Fail(c, err) })
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
		direct := httptest.NewRecorder()
		WriteError(direct, err)
		for _, body := range []*bytes.Buffer{rec.Body, direct.Body} {
			assert.Equal(t, http.StatusBadRequest, rec.Code)
			assert.LessOrEqual(t, body.Len(), MaxErrorBody, "error %d", i)
			var env struct {
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(body.Bytes(), &env))
			if i == 1 {
				assert.Equal(t, "[]", string(env.Data))
				continue
			}
			var data ValidationData
			require.NoError(t, json.Unmarshal(env.Data, &data))
			assert.Len(t, data.Errors, apperr.MaxNamedFields, "error %d", i)
			if i == 0 {
				// The long names and rules fill the message before 20 do: the rest are counted.
				assert.Regexp(t, `^header column 1 <+…: \x01+…; .*; and 999\d\d more$`, env.Message)
			}
		}
	}
}
