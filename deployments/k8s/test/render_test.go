package k8stest

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// k8sDir is deployments/k8s and repoRoot the repository, relative to this package's directory,
// where go test runs.
const (
	k8sDir   = ".."
	repoRoot = "../../.."
)

// Flavors of kustomization: the checks that differ between them switch on these.
const (
	flavorBase       = "base"
	flavorDev        = "dev"
	flavorProduction = "production"
)

// kustomizations are the directories under deployments/k8s that the test renders: the base on
// its own (it must be valid by itself) and every overlay.
func kustomizations() []string {
	return []string{"base", "overlays/dev", "overlays/production"}
}

// rendered is one kustomization built as `kubectl apply -k` would send it.
type rendered struct {
	dir     string // relative to deployments/k8s
	objects []object
}

// flavor is "base", "dev" or "production".
func (r *rendered) flavor() string { return filepath.Base(r.dir) }

// render builds dir (relative to deployments/k8s) with the kustomize API and decodes every object
// strictly. A build error stops the test; an object that does not decode fails it.
func render(t *testing.T, dir string) *rendered {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(k8sDir, dir))
	if err != nil {
		t.Fatal(err)
	}
	// The defaults of `kubectl kustomize`: no plugins, files only from inside the kustomization.
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	r := &rendered{dir: dir}
	for _, res := range resMap.Resources() {
		data, err := res.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %s %s: %v", dir, res.GetKind(), res.GetName(), err)
		}
		obj, err := decode(data)
		if err != nil {
			t.Errorf("%s: %s %s: %v", dir, res.GetKind(), res.GetName(), err)
			continue
		}
		r.objects = append(r.objects, obj)
	}
	if t.Failed() {
		// The checks would report the undecoded objects as missing: noise around the real error.
		t.FailNow()
	}
	if len(r.objects) == 0 {
		t.Fatalf("%s: kustomize rendered no object", dir)
	}
	return r
}

// all returns every rendered object of Go type T (e.g. appsv1.Deployment), in render order.
func all[T any](r *rendered) []*T {
	var out []*T
	for _, o := range r.objects {
		if v, ok := o.value.(*T); ok {
			out = append(out, v)
		}
	}
	return out
}
