// Package api_test keeps the OpenAPI description in step with the gateway's route table.
package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"ccplatform/gateway/api"
	"ccplatform/gateway/internal/route"
	"ccplatform/pkg/access"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notDescribed are routes the platform serves whose shapes the description leaves to later.
var notDescribed = map[string]bool{}

var ginParam = regexp.MustCompile(`:([A-Za-z_]+)`)

func TestEveryRouteIsDescribed(t *testing.T) {
	raw, err := os.ReadFile("openapi.yaml")
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	methodsOf := map[string][]string{}
	current := ""
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "  /") && strings.HasSuffix(l, ":"):
			current = strings.TrimSuffix(strings.TrimSpace(l), ":")
		case current != "" && (l == "    get:" || l == "    post:"):
			methodsOf[current] = append(methodsOf[current], strings.ToUpper(strings.Trim(strings.TrimSpace(l), ":")))
		case !strings.HasPrefix(l, " ") && l != "":
			current = ""
		}
	}
	described := 0
	for _, r := range route.Table() {
		key := r.Method + " " + r.Path
		if notDescribed[key] {
			continue
		}
		path := ginParam.ReplaceAllString(r.Path, "{$1}") + "/"
		assert.Contains(t, methodsOf[path], r.Method, "%s is not in openapi.yaml", key)
		described++
	}
	operations := 0
	for _, ms := range methodsOf {
		operations += len(ms)
	}
	assert.Equal(t, described, operations, "openapi.yaml describes only routes the gateway serves")
}

func TestJSONIsTheSameDescription(t *testing.T) {
	b, err := api.JSON()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "3.0.3", doc["openapi"])
	paths, ok := doc["paths"].(map[string]any)
	require.True(t, ok)
	assert.Equal(t, strings.Count(string(api.YAML), "\n  /"), len(paths), "every path of the YAML")
	assert.Contains(t, paths, "/v2/lead/create/")
}

// load is openapi.yaml as kin-openapi reads it, validated (every example against its schema).
func load(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.YAML)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()), "openapi.yaml is not a valid OpenAPI 3.0 description")
	return doc
}

func TestDescriptionIsValidWithValidExamples(t *testing.T) {
	load(t)
}

// TestEveryOperationDescribesItsAnswers holds the description to what the gateway and the services
// answer (gateway/README.md, "Behaviour"): every status an operation can get, with the failure
// envelope, and the headers of every answer. The e2e suite checks the real answers against it.
func TestEveryOperationDescribesItsAnswers(t *testing.T) {
	doc := load(t)
	routes := map[string]route.Route{}
	for _, r := range route.Table() {
		routes[r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}")+"/"] = r
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := op.OperationID + " (" + method + " " + path + ")"
			r, ok := routes[method+" "+path]
			require.True(t, ok, "%s is not a route of the gateway", name)
			// The success: 200, or 202 for an operation that accepts work done later (bulk import).
			success := http.StatusOK
			if op.Responses.Status(http.StatusAccepted) != nil {
				success = http.StatusAccepted
			}
			want := []int{success, http.StatusBadRequest, http.StatusUnauthorized, http.StatusTooManyRequests,
				http.StatusInternalServerError, http.StatusServiceUnavailable}
			if r.Service != route.Gateway {
				// Forwarded: the service may be not deployed, break the connection or not answer in time.
				want = append(want, http.StatusNotImplemented, http.StatusBadGateway, http.StatusGatewayTimeout)
			}
			if mayRefuse(r.Policy) {
				want = append(want, http.StatusForbidden)
			}
			if strings.Contains(path, "{") {
				want = append(want, http.StatusNotFound)
			}
			idempotent := false
			for _, p := range op.Parameters {
				idempotent = idempotent || p.Value.In == "header" && p.Value.Name == "Idempotency-Key"
			}
			if idempotent {
				want = append(want, http.StatusConflict)
			}
			if op.RequestBody != nil {
				want = append(want, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
				for ct, mt := range op.RequestBody.Value.Content {
					assert.True(t, mt.Example != nil || len(mt.Examples) > 0, "%s: the %s request body has no example", name, ct)
				}
			}
			assert.Nil(t, op.Responses.Default(), "%s: name every status instead of a default answer", name)
			for _, code := range want {
				assert.NotNil(t, op.Responses.Status(code), "%s does not declare %d", name, code)
			}
			for key, ref := range op.Responses.Map() {
				code, err := strconv.Atoi(key)
				require.NoError(t, err, "%s: status %q", name, key)
				res := ref.Value
				headers := res.Headers
				assert.True(t, headers["X-Request-Id"] != nil && headers["X-Request-Id"].Value.Required, "%s %d: X-Request-Id is required on every answer", name, code)
				for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
					// A 401 is given before the key is known: it has no bucket.
					assert.Equal(t, code != http.StatusUnauthorized, headers[h] != nil, "%s %d: %s", name, code, h)
				}
				if code == http.StatusTooManyRequests {
					assert.True(t, headers["Retry-After"] != nil && headers["Retry-After"].Value.Required, "%s 429: Retry-After", name)
				}
				if code >= 200 && code < 300 {
					// A success: 200, or 202 for an accepted bulk import.
					assert.Equal(t, idempotent, headers["Idempotent-Replayed"] != nil, "%s %d: Idempotent-Replayed goes with Idempotency-Key", name, code)
					for ct, mt := range res.Content {
						assert.True(t, mt.Example != nil || len(mt.Examples) > 0, "%s %d %s: no example", name, code, ct)
					}
					continue
				}
				mt := res.Content.Get("application/json")
				require.NotNil(t, mt, "%s %d: not JSON", name, code)
				if !slices.ContainsFunc(append(openapi3.SchemaRefs{mt.Schema}, mt.Schema.Value.AnyOf...), func(s *openapi3.SchemaRef) bool {
					return s.Ref == "#/components/schemas/ErrorEnvelope"
				}) {
					t.Errorf("%s %d: the failure envelope (ErrorEnvelope) is not the answer", name, code)
				}
				assert.True(t, mt.Example != nil || len(mt.Examples) > 0, "%s %d: no example", name, code)
			}
		}
	}
}

// mayRefuse reports whether the route's policy can answer 403: a group it does not allow, a scope
// a narrowed key may lack, or keys narrowed by scopes refused altogether.
func mayRefuse(p route.Policy) bool {
	if p.Scope != "" || p.FullKey || !p.Allows(access.None) {
		return true
	}
	for _, g := range access.Groups() {
		if !p.Allows(g) {
			return true
		}
	}
	return false
}
