package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/gateway/e2e/loadtest"
)

// expect tells whether a status is the answer a request asked for.
type expect func(status int) bool

// success is the answer of a valid request: 200, or 202 where the operation accepts work for later.
func success(status int) bool { return status == http.StatusOK || status == http.StatusAccepted }

// exactly is the error a request provokes on purpose.
func exactly(want int) expect { return func(status int) bool { return status == want } }

// refused is the answer to bad input: any 4xx. A 5xx is a bug, whatever the input.
func refused(status int) bool { return status >= 400 && status < 500 }

// answer is what every operation of the typed client returns.
type answer interface{ StatusCode() int }

// errNoAnswer marks an error of a request that got no whole answer, outside the client's
// transport (a stream that ended before its first event).
var errNoAnswer = errors.New("no answer")

// unreadable is the status counted for an answer the typed client could not decode: one the API
// description does not allow (a field of the wrong type, a date that is not RFC 3339).
const unreadable = -1

// measure sends one measured request of operation id through the typed client and counts its
// answer; ok is whether it was the one asked for. bad names the bad input the request carries.
func measure[R answer](m *mix, id, bad string, want expect, send func() (R, error)) (r R, ok bool) {
	start := time.Now()
	r, err := send()
	status := 0
	var transport *url.Error
	switch {
	case err == nil:
		status = r.StatusCode()
		if !want(status) {
			err = fmt.Errorf("status %d: %.300s", status, bodyOf(r))
		}
	case !errors.As(err, &transport) && !errors.Is(err, errNoAnswer):
		// The client sends through an http.Client, whose every error is a *url.Error: anything
		// else came from decoding an answer.
		status = unreadable
		err = fmt.Errorf("answer not as the API description says: %w", err)
	}
	ok = err == nil
	m.rec.record(outcome{route: m.route(id).String(), bad: bad, status: status, expected: ok}, time.Since(start), err)
	return r, ok
}

// bodyOf is the answer's body, for the message of an unexpected answer: every response type of
// the generated client holds it in its Body field.
func bodyOf(r answer) []byte {
	v := reflect.ValueOf(r)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if f := v.FieldByName("Body"); f.IsValid() && f.Kind() == reflect.Slice {
		return f.Bytes()
	}
	return nil
}

// rawAnswer is the answer of a request the typed client cannot send (a path parameter that is not
// of its type).
type rawAnswer struct {
	status int
	Body   []byte
}

func (a rawAnswer) StatusCode() int { return a.status }

// raw sends a measured request of operation id with a path (and query) put together by hand:
// only the bad inputs of the mix do so.
func (m *mix) raw(ctx context.Context, c *loadtest.Client, id, bad string, want expect, path string, body []byte) {
	r := m.route(id)
	measure(m, id, bad, want, func() (rawAnswer, error) {
		status, b, err := c.Send(ctx, r.method, path, body)
		if err != nil {
			// Send decodes nothing: whatever failed, no answer came.
			return rawAnswer{}, fmt.Errorf("%w: %w", errNoAnswer, err)
		}
		return rawAnswer{status, b}, nil
	})
}

// route is the route of an operation of the description; an id the description does not have is
// a bug of the mix (uncovered reports it before the run).
func (m *mix) route(id string) route {
	r, ok := m.routes[id]
	if !ok {
		panic("soak: no operation " + id + " in the API description")
	}
	return r
}

// typedClient is a client of the API as an integrator builds it, on the mix's connections and
// without retries: an answer the soak counts is the answer the stack gave.
func typedClient(hc *http.Client, baseURL, key string) (*ccapi.ClientWithResponses, error) {
	if key == "" {
		return ccapi.NewClientWithResponses(baseURL, ccapi.WithHTTPClient(hc))
	}
	return ccapi.New(baseURL, key, ccapi.WithBaseHTTPClient(hc), ccapi.WithMaxAttempts(1))
}

func ptr[T any](v T) *T { return &v }
