// Package api is the public API's description (openapi.yaml), embedded so that the gateway serves
// exactly the file in the repository: GET /openapi.yaml, and the same as JSON at /openapi.json.
package api

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// YAML is openapi.yaml as written.
//
//go:embed openapi.yaml
var YAML []byte

// JSON is the same description as JSON, for tools that read only JSON.
func JSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(YAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml as JSON: %w", err)
	}
	return b, nil
}
