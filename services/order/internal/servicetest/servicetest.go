// Package servicetest runs the service's real HTTP handler on a PostgreSQL database of the test
// package's own (made by pkg/dbtest, migrated, dropped after), and sends requests to it the way
// the gateway does. It is imported by tests only.
package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"
	"ccplatform/services/order/internal/migrations"
	"ccplatform/services/order/internal/server"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token the test handler expects.
const Token = "test-internal-token"

// UserID is the verified caller that requests carry unless a test says otherwise.
const UserID = "7"

// UnreachableUserURL is where the user service is said to be: nothing listens there, so every
// check against it fails as it does when that service is down.
const UnreachableUserURL = "http://127.0.0.1:1"

// Env is a migrated database and the handler serving it.
type Env struct {
	DB      *sqlx.DB
	Handler http.Handler
}

// Main runs the test package with an Env of its own, given to setup before the tests run.
func Main(m *testing.M, label string, setup func(*Env)) {
	dbtest.Main(m, label, func(url string) int {
		ctx := context.Background()
		conn, err := db.Open(ctx, url, migrations.Schema, 16)
		if err != nil {
			fmt.Fprintln(os.Stderr, "servicetest:", err)
			return 1
		}
		defer conn.Close()
		if err := migrations.Up(ctx, conn); err != nil {
			fmt.Fprintln(os.Stderr, "servicetest:", err)
			return 1
		}
		log := zap.NewNop()
		setup(&Env{DB: conn, Handler: server.New(server.Deps{
			DB:            conn,
			Log:           log,
			InternalToken: Token,
			Users:         svcclient.New("user", UnreachableUserURL, Token, time.Second),
			Idempotency:   idempotency.New(conn, log),
		})})
		return m.Run()
	})
}

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

// Do sends a request as the gateway would: internal token, verified user id, JSON content type.
// body is sent as is when it is a string, else encoded as JSON. headers are name/value pairs that
// override the defaults; an empty value removes the header.
func (e *Env) Do(t testing.TB, method, path string, body any, headers ...string) Response {
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
	req.Header.Set(web.HeaderInternalToken, Token)
	req.Header.Set(web.HeaderUserID, UserID)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	res := Response{Status: rec.Code, Header: rec.Header()}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("%s %s: answer is not an envelope: %v: %s", method, path, err, rec.Body.String())
	}
	return res
}
