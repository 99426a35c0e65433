package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"ccplatform/pkg/apperr"

	"github.com/gin-gonic/gin"
)

// DefaultBodyLimit is the largest request body accepted (DESIGN §3).
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
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apperr.New(apperr.TooLarge, "body: must be at most %d bytes", tooLarge.Limit)
		}
		return nil, apperr.Wrap(apperr.Invalid, err, "body: could not be read")
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(b))
	c.Set(bodyKey, b)
	return b, nil
}

const bodyKey = "web.body"

// DecodeJSON decodes the body into dst with the contract's rules: a JSON content type (or none),
// a JSON object, unknown fields ignored; a wrong type names the field.
func DecodeJSON(c *gin.Context, dst any) error {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return apperr.New(apperr.UnsupportedMediaType, "Content-Type: must be application/json")
		}
	}
	b, err := ReadBody(c)
	if err != nil {
		return err
	}
	return Unmarshal(b, dst)
}

// Unmarshal decodes a JSON object body into dst, mapping decoding failures to field errors.
func Unmarshal(b []byte, dst any) error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return apperr.Field("body", "must be a JSON object")
	}
	if trimmed[0] != '{' {
		return apperr.Field("body", "must be a JSON object")
	}
	if err := json.Unmarshal(trimmed, dst); err != nil {
		return decodeError(err)
	}
	return nil
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return apperr.Field("body", fmt.Sprintf("malformed JSON at offset %d", syn.Offset))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return apperr.Field(field, "must be "+jsonTypeName(typ.Type.Kind().String(), typ.Type.String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Field("body", "malformed JSON: unexpected end")
	default:
		return apperr.Wrap(apperr.Invalid, err, "body: malformed JSON")
	}
}

func jsonTypeName(kind, full string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "of type " + full
}
