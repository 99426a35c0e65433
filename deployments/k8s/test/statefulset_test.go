package k8stest

import (
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// checkStatefulSets holds the render's StatefulSets to what keeps them running across restarts
// and kustomize versions:
//   - serviceName names a headless Service (clusterIP None) selecting the StatefulSet's pods: it
//     gives each pod its stable DNS name; a ClusterIP Service gives none;
//   - a pod with an fsGroup changes its volumes' group only on a mismatch at their root
//     (fsGroupChangePolicy OnRootMismatch): the recursive change on every start makes files
//     group-readable that their program refuses so (RabbitMQ's Erlang cookie, PostgreSQL's data
//     directory);
//   - the volumeClaimTemplates carry no labels: the field is immutable, and kustomize versions
//     differ on whether a labels transformer reaches it (see checkKustomizationLabels).
func checkStatefulSets(t *testing.T, s *suite, r *rendered) {
	for _, sts := range all[appsv1.StatefulSet](r) {
		svc := service(r, sts.Spec.ServiceName)
		switch {
		case svc == nil:
			// checkServices reports it.
		case svc.Spec.ClusterIP != corev1.ClusterIPNone:
			t.Errorf("StatefulSet %s: serviceName %s is not a headless Service (clusterIP: None): the pods get no stable DNS names", sts.Name, svc.Name)
		case len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(sts.Spec.Template.Labels)):
			t.Errorf("StatefulSet %s: its headless Service %s does not select its pods", sts.Name, svc.Name)
		}
		if sc := sts.Spec.Template.Spec.SecurityContext; sc != nil && sc.FSGroup != nil && len(sts.Spec.VolumeClaimTemplates) > 0 {
			if p := sc.FSGroupChangePolicy; p == nil || *p != corev1.FSGroupChangeOnRootMismatch {
				t.Errorf("StatefulSet %s: fsGroup without fsGroupChangePolicy OnRootMismatch: every start re-permissions the data volume", sts.Name)
			}
		}
		for _, vct := range sts.Spec.VolumeClaimTemplates {
			if len(vct.Labels) > 0 {
				t.Errorf("StatefulSet %s: volumeClaimTemplate %s has labels %v: an immutable field a transformer should not touch", sts.Name, vct.Name, vct.Labels)
			}
		}
	}
}

// checkKustomizationLabels: a kustomization that brings a StatefulSet with volumeClaimTemplates
// uses neither commonLabels nor a labels entry with includeSelectors or includeTemplates:
// those reach the volumeClaimTemplates in some kustomize versions and not in others, so that
// the same manifest, rendered by another version, changes an immutable field and is refused.
func checkKustomizationLabels(t *testing.T, s *suite, r *rendered) {
	if len(statefulSetsWithClaims(r)) == 0 {
		t.Skip("no StatefulSet with volumeClaimTemplates")
	}
	raw, err := os.ReadFile(filepath.Join(k8sDir, r.dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", r.dir, err)
	}
	//lint:ignore SA1019 the deprecated field is what this check looks for
	if len(k.CommonLabels) > 0 {
		t.Errorf("%s: commonLabels reach the StatefulSets' volumeClaimTemplates %v (and selectors): use labels with includeTemplates false", r.dir, statefulSetsWithClaims(r))
	}
	for _, l := range k.Labels {
		if l.IncludeSelectors || l.IncludeTemplates {
			t.Errorf("%s: labels %v with includeSelectors/includeTemplates: some kustomize versions add them to the volumeClaimTemplates of %v", r.dir, l.Pairs, statefulSetsWithClaims(r))
		}
	}
}

func statefulSetsWithClaims(r *rendered) []string {
	var out []string
	for _, sts := range all[appsv1.StatefulSet](r) {
		if len(sts.Spec.VolumeClaimTemplates) > 0 {
			out = append(out, sts.Name)
		}
	}
	return out
}
