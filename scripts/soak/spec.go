package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"ccplatform/gateway/e2e/stacktest"

	"github.com/getkin/kin-openapi/openapi3"
)

// specFile is the public API's description, which `make client` generates clients/go from.
const specFile = "gateway/api/openapi.yaml"

// route is an operation of the public API's description: its method and path template name it in
// the reports.
type route struct {
	method, path string
}

func (r route) String() string { return r.method + " " + r.path }

// fill is the route's path with its parameters, in the template's order, put in as they are: the
// bad inputs of the mix send what a typed parameter could not hold (`%00` for an integer id).
func (r route) fill(params ...string) string {
	p := r.path
	for _, v := range params {
		i := strings.Index(p, "{")
		j := strings.Index(p, "}")
		if i < 0 || j < i {
			panic(fmt.Sprintf("soak: %s has fewer parameters than %q", r, params))
		}
		p = p[:i] + v + p[j+1:]
	}
	if strings.Contains(p, "{") {
		panic(fmt.Sprintf("soak: %s needs more parameters than %q", r, params))
	}
	return p
}

// loadRoutes is every operation of the description by its operationId, read from the file
// itself: the client's embedded copy spells the ids as Go names.
func loadRoutes() (map[string]route, error) {
	root, err := stacktest.RepoRoot()
	if err != nil {
		return nil, err
	}
	spec, err := openapi3.NewLoader().LoadFromFile(filepath.Join(root, specFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", specFile, err)
	}
	out := map[string]route{}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				return nil, fmt.Errorf("%s %s has no operationId", method, path)
			}
			out[op.OperationID] = route{method, path}
		}
	}
	return out, nil
}

// uncovered lists the operations of the description no request of the mix sends as a valid
// request, and the operations of the mix the description does not have (a renamed one): a new
// route without soak coverage fails the soak before it starts, and its unit test.
func uncovered(routes map[string]route, ops []op) (missing, unknown []string) {
	valid := map[string]bool{}
	for _, o := range ops {
		if _, ok := routes[o.id]; !ok {
			unknown = append(unknown, o.id)
		}
		if o.bad == "" {
			valid[o.id] = true
		}
	}
	for id := range routes {
		if !valid[id] {
			missing = append(missing, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(unknown)
	return missing, slices.Compact(unknown)
}
