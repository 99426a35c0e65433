// Package webtest sends requests to a service's real HTTP handler the way the gateway forwards
// them (internal token, verified user id, JSON content type) and decodes the envelope. It is for
// tests only.
package webtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"ccplatform/pkg/web"

	"ccplatform/pkg/identity"
)

// Response is a decoded envelope with its status and headers.
type Response struct {
	Status  int
	Header  http.Header
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// Errors is data.errors of a validation failure.
func (r Response) Errors() map[string]string {
	var v struct {
		Errors map[string]string `json:"errors"`
	}
	_ = json.Unmarshal(r.Data, &v)
	return v.Errors
}

// ID is data.id of an operation that returns an id.
func (r Response) ID() int64 {
	var v struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(r.Data, &v)
	return v.ID
}

// Client calls Handler as the gateway would, on behalf of UserID of AccessGroup (admin when
// empty: the gateway always names the caller's group, and most tests act as staff).
type Client struct {
	Handler     http.Handler
	Token       string
	UserID      string
	AccessGroup string
}

// As is the same client acting as user of group.
func (c Client) As(user, group string) Client {
	c.UserID, c.AccessGroup = user, group
	return c
}

// Do sends a request. body is sent as is when it is a string, else encoded as JSON. headers are
// name/value pairs that override the defaults; an empty value removes the header.
func (c Client) Do(t testing.TB, method, path string, body any, headers ...string) Response {
	t.Helper()
	rec := c.Raw(t, method, path, body, headers...)
	res := Response{Status: rec.Code, Header: rec.Header()}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("%s %s: answer is not an envelope: %v: %s", method, path, err, rec.Body.String())
	}
	return res
}

// Raw sends a request like Do and returns the answer as it is, for answers that are no envelope
// (a CSV download).
func (c Client) Raw(t testing.TB, method, path string, body any, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.HeaderInternalToken, c.Token)
	req.Header.Set(identity.HeaderUserID, c.UserID)
	if c.UserID != "" {
		group := c.AccessGroup
		if group == "" {
			group = "admin"
		}
		req.Header.Set(identity.HeaderAccessGroup, group)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	c.Handler.ServeHTTP(rec, req)
	return rec
}
