package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"

	"ccplatform/pkg/apperr"

	"github.com/gin-gonic/gin"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DefaultBodyLimit is the largest request body accepted (docs/api.md, "Limits").
const DefaultBodyLimit = 1 << 20

// ReadBody reads the request body once (bounded by the BodyLimit middleware, if any) and keeps it
// so that later readers (idempotency, decoding) see the same bytes.
func ReadBody(c *gin.Context) ([]byte, error) {
	if b, ok := c.Get(bodyKey); ok {
		return b.([]byte), nil
	}
	if c.Request.Body == nil {
		c.Set(bodyKey, []byte(nil))
		return nil, nil
	}
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return nil, BodyReadError(err)
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(b))
	c.Set(bodyKey, b)
	return b, nil
}

const bodyKey = "web.body"

// BodyReadError is the answer to a request body that broke off while being read: 413 past the
// BodyLimit, 408 past the read deadline, else 400. Handlers that stream a body use it too.
func BodyReadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return apperr.New(apperr.TooLarge, "body: must be at most %d bytes", tooLarge.Limit)
	}
	if IsReadTimeout(err) {
		return ErrBodyTimeout
	}
	return apperr.Wrap(apperr.Invalid, err, "body: could not be read")
}

// ErrBodyTimeout answers a body that did not arrive within the server's read timeout (a client
// sending a byte a second): 408 with the envelope, never a made-up status.
var ErrBodyTimeout = apperr.New(apperr.RequestTimeout, "body: not received in time; send the whole body at once")

// IsReadTimeout reports whether err is a read that ran into the connection's deadline.
func IsReadTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
}

// errMediaType is the one answer for every content type but JSON in UTF-8.
var errMediaType = apperr.New(apperr.UnsupportedMediaType, "Content-Type: must be application/json (charset utf-8, if any)")

// CheckContentType accepts exactly `application/json`, with at most a `charset=utf-8` parameter
// (docs/api.md). A missing type is refused too: a body is only read as what it says it is, and
// other `+json` types (JSON Patch, merge patch) mean operations this API does not have.
func CheckContentType(c *gin.Context) error {
	mt, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "application/json" {
		return errMediaType
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return errMediaType
		}
	}
	return nil
}

// DecodeJSON checks the content type and decodes the body into dst with Unmarshal's rules.
func DecodeJSON(c *gin.Context, dst any) error {
	if err := CheckContentType(c); err != nil {
		return err
	}
	b, err := ReadBody(c)
	if err != nil {
		return err
	}
	return Unmarshal(b, dst)
}

// Unmarshal decodes a JSON object body into dst with the contract's rules, mapping every failure
// to a field error: member names match exactly (a member in another case is an unknown member,
// ignored like any other); a name may appear once; text must be valid UTF-8 (no lone surrogate
// escapes) without U+0000, which PostgreSQL text cannot hold; a number must fit the Go type it is
// decoded into, so wire types sized like their columns (int32 for integer) bound it there.
func Unmarshal(b []byte, dst any) error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return apperr.Field("body", "must be a JSON object")
	}
	if err := jsonv2.Unmarshal(trimmed, dst); err != nil {
		return decodeError(trimmed, err)
	}
	// A NUL can only be written as an escape; the walk that names its field runs only then.
	if bytes.Contains(trimmed, nulEscape) {
		if fe := nulFields(trimmed); len(fe) > 0 {
			return fe.Err()
		}
	}
	return nil
}

var nulEscape = []byte(`\u0000`)

// ruleNUL is the rule a text with U+0000 breaks.
const ruleNUL = "must not contain the NUL character (U+0000)"

// nulFields names every member whose text (or name) holds U+0000.
func nulFields(body []byte) apperr.FieldErrors {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	fe := apperr.FieldErrors{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case string:
			if strings.IndexByte(x, 0) >= 0 {
				fe.Add(orBody(path), ruleNUL)
			}
		case map[string]any:
			for k, e := range x {
				if strings.IndexByte(k, 0) >= 0 {
					fe.Add(orBody(path), "member names "+ruleNUL)
					continue
				}
				walk(e, joinField(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(v, "")
	return fe
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// fieldOf turns a JSON pointer into the field name errors use (`owner.id`, `tags[0]`): an array
// element is written with brackets, an object member with a dot, which only the body can tell.
func fieldOf(body []byte, ptr jsontext.Pointer) string {
	var v any
	_ = json.Unmarshal(body, &v)
	path := ""
	for tok := range ptr.Tokens() {
		switch x := v.(type) {
		case []any:
			path += "[" + tok + "]"
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(x) {
				v = x[i]
			} else {
				v = nil
			}
		case map[string]any:
			path = joinField(path, tok)
			v = x[tok]
		default:
			path = joinField(path, tok)
			v = nil
		}
	}
	return orBody(path)
}

func decodeError(body []byte, err error) error {
	var sem *jsonv2.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &syn):
		field := fieldOf(body, syn.JSONPointer)
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			return apperr.Field(field, "must appear only once")
		case strings.Contains(syn.Err.Error(), "invalid UTF-8"), strings.Contains(syn.Err.Error(), "surrogate"):
			return apperr.Field(field, "must be valid UTF-8 text")
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			return apperr.Field("body", "malformed JSON: unexpected end")
		}
		return apperr.Field("body", fmt.Sprintf("malformed JSON at offset %d", syn.ByteOffset))
	case errors.As(err, &sem):
		field := fieldOf(body, sem.JSONPointer)
		if sem.GoType == nil {
			return apperr.Field(field, "has an invalid value")
		}
		return apperr.Field(field, "must be "+jsonTypeName(sem.GoType))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Field("body", "malformed JSON: unexpected end")
	default:
		return apperr.Wrap(apperr.Invalid, err, "body: malformed JSON")
	}
}

// jsonTypeName says what a value of Go type t looks like in JSON, with the range of a sized integer.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// Tri-state fields (pkg/optional) say what their value must be.
	if t.Kind() == reflect.Struct {
		if f, ok := t.FieldByName("V"); ok && t.NumField() == 3 {
			return jsonTypeName(f.Type)
		}
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int32:
		return "an integer from -2147483648 to 2147483647"
	case reflect.Int16:
		return "an integer from -32768 to 32767"
	case reflect.Int8:
		return "an integer from -128 to 127"
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of type " + t.String()
}

// MaxQueryParams bounds the parameters of a query string. A list takes a handful of filters and
// at most a page of ids each; url.ParseQuery's own bound (10,000) is far above anything valid.
const MaxQueryParams = 1000

// tooManyParams is the rule of a query string over MaxQueryParams.
var tooManyParams = fmt.Sprintf("must have at most %d parameters", MaxQueryParams)

// ParseQuery parses a query string whole: a parameter it cannot parse (a `;` separator, a bad
// percent escape), one too many, or a name or value that is not clean text (RuleText) is a 400,
// never a query with the rest of its filters dropped, which a partner's filtered export would take
// for everyone's rows, nor a value the database refuses with a 500.
func ParseQuery(raw string) (url.Values, error) {
	if raw == "" {
		return url.Values{}, nil
	}
	if err := CheckQuery(raw); err != nil {
		return nil, err
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		// CheckQuery refuses whatever url.ParseQuery does; kept so a difference is a 400 still.
		return nil, errQuerySyntax
	}
	return q, nil
}

// WholeQuery refuses a request whose query string ParseQuery refuses, before any handler reads it:
// gin's c.Query and URL.Query() drop what they cannot parse without a word, and pass on any text.
func WholeQuery(c *gin.Context) {
	if err := CheckQuery(c.Request.URL.RawQuery); err != nil {
		Fail(c, err)
		return
	}
	c.Next()
}
