// Package api_test keeps the OpenAPI description in step with the gateway's route table.
package api_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"ccplatform/gateway/api"
	"ccplatform/gateway/internal/route"

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
	assert.Len(t, methodsOf, described, "openapi.yaml describes only routes the gateway serves")
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
