// Package calltest gives the call service's tests what they run against: a PostgreSQL database of
// the test package's own (pkg/dbtest, migrated, dropped after), a RabbitMQ vhost of their own
// (pkg/mqtest, deleted after), the real HTTP handler, and helpers to publish platform events and
// read what the service publishes. It is imported by tests only.
package calltest

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
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/web"
	"ccplatform/services/call/internal/migrations"
	"ccplatform/services/call/internal/server"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Token is the internal token the test handler expects.
const Token = "test-internal-token"

// Env is a migrated database, a vhost, and the handler serving the database.
type Env struct {
	DB      *sqlx.DB
	DBURL   string
	AMQPURL string
	Handler http.Handler
}

// Main runs the test package with an Env of its own, given to setup before the tests run.
func Main(m *testing.M, label string, setup func(*Env)) {
	dbtest.Main(m, label, func(url string) int {
		amqpURL, dropVhost, err := mqtest.CreateVhost(label)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calltest:", err)
			return 1
		}
		defer func() {
			if err := dropVhost(); err != nil {
				fmt.Fprintln(os.Stderr, "calltest: drop vhost:", err)
			}
		}()
		ctx := context.Background()
		conn, err := db.Open(ctx, url, migrations.Schema, 16)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calltest:", err)
			return 1
		}
		defer conn.Close()
		if err := migrations.Up(ctx, conn); err != nil {
			fmt.Fprintln(os.Stderr, "calltest:", err)
			return 1
		}
		setup(&Env{DB: conn, DBURL: url, AMQPURL: amqpURL,
			Handler: server.New(server.Deps{DB: conn, Log: zap.NewNop(), InternalToken: Token})})
		return m.Run()
	})
}

// Response is a decoded envelope with its status.
type Response struct {
	Status  int
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

// Get sends a GET as the gateway would (internal token, JSON content type); headers are name/value
// pairs that override the defaults, an empty value removing the header.
func (e *Env) Get(t testing.TB, path string, headers ...string) Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.HeaderInternalToken, Token)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	res := Response{Status: rec.Code}
	body, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(bytes.TrimSpace(body), &res); err != nil {
		t.Fatalf("GET %s: answer is not an envelope: %v: %s", path, err, body)
	}
	return res
}

// Eventually polls cond every 50 ms until it holds or the wait is over.
func Eventually(t testing.TB, wait time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %s", wait, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
