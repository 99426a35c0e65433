package e2e

// Every request the e2e tests send to the gateway, and every answer they get, is checked against
// the public API's description (api/openapi.yaml, the very bytes the gateway embeds and serves)
// with kin-openapi, by an http.RoundTripper (openapiCheck.transport) on the tests' gateway client:
// Stack.Call, Stack.Do, Stack.ClientFor and the fault test's client all go through it.
//
// What fails the test that sent the request (t.Errorf, naming the operation, the status and the
// validator's reason; a request sent without its test in the context, see forTest, fails the
// whole run instead, from TestMain):
//   - an answer the spec does not describe: a status the operation does not declare (a `default`
//     response does not count), a body that does not match the status's schema (a member a schema
//     with additionalProperties: false does not list, a missing required member, a wrong type or
//     value), a header declared required but absent, or a declared header of the wrong type;
//   - an answer to a path or method the spec does not describe that is not the gateway's 404
//     (unknown path) or 405 (known path, wrong method, with Allow) error envelope;
//   - a request the spec rejects that the API accepted (2xx): the spec and the code disagree on
//     what a valid request is.
//
// What is exempt:
//   - requests the spec rejects are recorded (logged with the test), not failures: the bad-input
//     tests send malformed bodies, wrong content types, missing keys and out-of-range filters on
//     purpose. Their answers are still checked in full;
//   - the endpoints outside the API: /livez, /readyz, /metrics, /docs/, /openapi.yaml and
//     /openapi.json pass through unchecked;
//   - the body of an event stream (text/event-stream) is not read: only its status and headers
//     are checked;
//   - HEAD requests (kin-openapi checks no answer to them).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"ccplatform/gateway/api"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// openapiCheck is the description every gateway request and answer of the run is checked against;
// TestMain loads it before the stack starts.
var openapiCheck *specChecker

// specExempt are the paths outside the public API (probes, metrics, the description and its
// page): not checked.
func specExempt(path string) bool {
	switch path {
	case "/livez", "/readyz", "/metrics", "/openapi.yaml", "/openapi.json", "/docs":
		return true
	}
	return strings.HasPrefix(path, "/docs/")
}

type testKey struct{}

// forTest returns ctx carrying t, the test a violation found in a request sent with ctx fails.
func forTest(ctx context.Context, t testing.TB) context.Context {
	return context.WithValue(ctx, testKey{}, t)
}

// onBehalfOf puts t in the context of every request that has no test in it yet.
type onBehalfOf struct {
	t    testing.TB
	next http.RoundTripper
}

func (o onBehalfOf) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := req.Context().Value(testKey{}).(testing.TB); !ok {
		req = req.WithContext(forTest(req.Context(), o.t))
	}
	return o.next.RoundTrip(req)
}

// specChecker holds the loaded description and what the run saw.
type specChecker struct {
	doc    *openapi3.T
	router routers.Router
	// unrouted describes the gateway's answers to a path or a method the spec does not have.
	unrouted *openapi3.Operation

	checked, rejected atomic.Int64
	mu                sync.Mutex
	seen              map[string]int // operationId → requests checked
	orphans           []string       // violations of requests sent without a test in their context
}

// loadSpec loads and validates api/openapi.yaml (examples included: each must match its schema).
func loadSpec() (*specChecker, error) {
	// The bulk import's files (and its CSV download) are strings to the description: the route
	// itself reads them. kin-openapi has no decoder for NDJSON, and its CSV decoder refuses a file
	// whose rows differ in length, which the import accepts (refusing such a row alone).
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/csv", openapi3filter.FileBodyDecoder)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.YAML)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi.yaml is not a valid description: %w", err)
	}
	// The stack listens on a free port, not on the servers' address: match paths only.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml router: %w", err)
	}
	errorEnvelope := doc.Components.Schemas["ErrorEnvelope"]
	requestID := doc.Components.Headers["X-Request-Id"]
	if errorEnvelope == nil || requestID == nil {
		return nil, errors.New("openapi.yaml: components.schemas.ErrorEnvelope and components.headers.X-Request-Id are needed")
	}
	content := openapi3.NewContentWithJSONSchemaRef(errorEnvelope)
	allow := &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Required: true, Schema: openapi3.NewStringSchema().WithMinLength(1).NewRef()}}}
	answer := func(description string, headers openapi3.Headers) *openapi3.ResponseRef {
		r := openapi3.NewResponse().WithDescription(description).WithContent(content)
		r.Headers = headers
		return &openapi3.ResponseRef{Value: r}
	}
	unrouted := openapi3.NewOperation()
	unrouted.OperationID = "(no operation)"
	unrouted.Responses = openapi3.NewResponses(
		openapi3.WithStatus(http.StatusNotFound, answer("unknown path", openapi3.Headers{"X-Request-Id": requestID})),
		openapi3.WithStatus(http.StatusMethodNotAllowed, answer("known path, wrong method",
			openapi3.Headers{"X-Request-Id": requestID, "Allow": allow})),
	)
	return &specChecker{doc: doc, router: router, unrouted: unrouted, seen: map[string]int{}}, nil
}

// transport is base with every request and answer checked.
func (s *specChecker) transport(base http.RoundTripper) http.RoundTripper {
	return &specTransport{check: s, base: base}
}

type specTransport struct {
	check *specChecker
	base  http.RoundTripper
}

func (st *specTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s := st.check
	if specExempt(req.URL.Path) || req.Method == http.MethodHead {
		return st.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	in, opName, routeErr, reqErr := s.checkRequest(req, body)
	resp, err := st.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	s.checked.Add(1)
	uri := req.URL.RequestURI()
	if len(uri) > 200 {
		uri = uri[:200] + "…"
	}
	what := fmt.Sprintf("%s (%s %s) answered %d", opName, req.Method, uri, resp.StatusCode)
	if reqErr != nil {
		s.rejected.Add(1)
		if t, ok := req.Context().Value(testKey{}).(testing.TB); ok {
			t.Logf("openapi: %s to a request the spec rejects (allowed, the answer is still checked): %v", what, oneLine(reqErr))
		}
		if resp.StatusCode < 300 {
			s.violation(req, "openapi: %s, yet the spec rejects the request: %v", what, oneLine(reqErr))
		}
	}
	if routeErr != nil {
		want := http.StatusNotFound
		if errors.Is(routeErr, routers.ErrMethodNotAllowed) {
			want = http.StatusMethodNotAllowed
		}
		if resp.StatusCode != want {
			s.violation(req, "openapi: %s, but the spec has no such operation (%v): want the gateway's %d envelope", what, routeErr, want)
			return resp, nil
		}
	}
	if err := s.checkResponse(in, resp); err != nil {
		s.violation(req, "openapi: %s (X-Request-Id %s): %v", what, resp.Header.Get("X-Request-Id"), oneLine(err))
	}
	return resp, nil
}

// checkRequest finds the operation of req and validates req against it. routeErr is set when the
// spec has no operation for it; in is then the input of the gateway's routing answers.
func (s *specChecker) checkRequest(req *http.Request, body []byte) (in *openapi3filter.RequestValidationInput, opName string, routeErr, reqErr error) {
	// A copy to validate (the validator reads the body and may set defaults in it); the spec
	// writes every path with its trailing slash, the gateway takes both.
	v := req.Clone(req.Context())
	v.Body = io.NopCloser(bytes.NewReader(body))
	if !strings.HasSuffix(v.URL.Path, "/") {
		v.URL.Path += "/"
		if v.URL.RawPath != "" {
			v.URL.RawPath += "/"
		}
	}
	opts := &openapi3filter.Options{
		MultiError:          true,
		SkipSettingDefaults: true,
		AuthenticationFunc:  apiKeyPresent,
	}
	opts.WithCustomSchemaErrorFunc(schemaReason)
	route, params, err := s.router.FindRoute(v)
	if err != nil {
		route = &routers.Route{Spec: s.doc, Path: req.URL.Path, Method: req.Method, Operation: s.unrouted}
		in = &openapi3filter.RequestValidationInput{Request: v, Route: route, Options: opts}
		return in, "(no operation)", err, err
	}
	opName = route.Operation.OperationID
	s.mu.Lock()
	s.seen[opName]++
	s.mu.Unlock()
	in = &openapi3filter.RequestValidationInput{Request: v, PathParams: params, Route: route, Options: opts}
	return in, opName, nil, openapi3filter.ValidateRequest(req.Context(), in)
}

// checkResponse validates resp against the operation of in: its status must be declared, and its
// headers and body must match. The body is read and put back; an event stream's is left alone.
func (s *specChecker) checkResponse(in *openapi3filter.RequestValidationInput, resp *http.Response) error {
	if in.Route.Operation.Responses.Status(resp.StatusCode) == nil {
		return fmt.Errorf("status %d is not declared by the operation (it declares %s)",
			resp.StatusCode, strings.Join(in.Route.Operation.Responses.Keys(), ", "))
	}
	opts := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}
	opts.WithCustomSchemaErrorFunc(schemaReason)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		opts.ExcludeResponseBody = true
	} else {
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("read the answer: %w", err)
		}
		out.SetBodyBytes(raw)
	}
	return openapi3filter.ValidateResponse(context.Background(), out)
}

// apiKeyPresent is the security check: an apiKey scheme's header must be there (whether the key
// is valid is the gateway's to say, with 401).
func apiKeyPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	sc := in.SecurityScheme
	if sc == nil || sc.Type != "apiKey" || sc.In != "header" {
		return nil
	}
	if in.RequestValidationInput.Request.Header.Get(sc.Name) == "" {
		return fmt.Errorf("header %s is missing", sc.Name)
	}
	return nil
}

// violation fails the test in req's context, or, for a request sent without one, is kept for
// TestMain to report (failing the run).
func (s *specChecker) violation(req *http.Request, format string, args ...any) {
	if t, ok := req.Context().Value(testKey{}).(testing.TB); ok {
		t.Errorf(format, args...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orphans = append(s.orphans, fmt.Sprintf(format, args...))
}

// summary is the run's account: what was checked, which operations were never exercised, and the
// violations no test could be failed for (an error then).
func (s *specChecker) summary() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var unexercised []string
	for _, p := range s.doc.Paths.InMatchingOrder() {
		for _, op := range s.doc.Paths.Value(p).Operations() {
			if s.seen[op.OperationID] == 0 {
				unexercised = append(unexercised, op.OperationID)
			}
		}
	}
	sort.Strings(unexercised)
	line := fmt.Sprintf("openapi: %d answers checked against api/openapi.yaml (%d to requests the spec rejects), %d operations exercised",
		s.checked.Load(), s.rejected.Load(), len(s.seen))
	if len(unexercised) > 0 {
		line += "; never exercised: " + strings.Join(unexercised, ", ")
	}
	if len(s.orphans) > 0 {
		return line, fmt.Errorf("openapi: %d violations in requests sent without a test in their context (use Stack.Call or Stack.Do):\n%s",
			len(s.orphans), strings.Join(slices.Compact(s.orphans), "\n"))
	}
	return line, nil
}

// schemaReason is a schema violation in one short line: where, why, and the value (cut), instead of
// the validator's dump of the whole schema.
func schemaReason(e *openapi3.SchemaError) string {
	if e.Origin != nil {
		return "" // the validator's own text, which names the nested violations
	}
	v, _ := json.Marshal(e.Value)
	if len(v) > 120 {
		v = append(v[:120], "…"...)
	}
	return fmt.Sprintf("at \"/%s\": %s (value %s)", strings.Join(e.JSONPointer(), "/"), e.Reason, v)
}

// oneLine folds the validator's multi-line reasons into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
