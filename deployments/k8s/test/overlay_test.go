package k8stest

import (
	"encoding/json"
	"strings"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	rabbitmqv1beta1 "github.com/rabbitmq/cluster-operator/v2/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	networkingv1 "k8s.io/api/networking/v1"
)

// checkPlaceholders: the base's placeholder values carry the marker the binaries refuse to
// start with (pkg/app.PlaceholderMarker, read from the sources), so that the base applied as is
// cannot run; no overlay but dev (whose values are its own, for a throwaway cluster) ships one.
func checkPlaceholders(t *testing.T, s *suite, r *rendered) {
	marker, err := stringConst(repoRoot, "pkg/app/app.go", "PlaceholderMarker")
	if err != nil {
		t.Fatalf("the binaries' placeholder marker: %v", err)
	}
	switch r.flavor() {
	case flavorBase:
		token, ok := secretValue(r, "platform-secrets", "INTERNAL_TOKEN")
		if ok && !strings.Contains(token, marker) {
			t.Errorf("platform-secrets INTERNAL_TOKEN %q: a placeholder the binaries do not refuse (it lacks %q)", token, marker)
		}
	case flavorDev:
	default:
		for _, o := range r.objects {
			raw, err := json.Marshal(o.value)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(raw), marker) {
				t.Errorf("%s holds a placeholder (%s): replace it, or take the value from a Secret made outside git", o, marker)
			}
		}
	}
}

func cnpgClusters(r *rendered) []*cnpgv1.Cluster { return all[cnpgv1.Cluster](r) }

func rabbitmqClusters(r *rendered) []*rabbitmqv1beta1.RabbitmqCluster {
	return all[rabbitmqv1beta1.RabbitmqCluster](r)
}

// appEnv is APP_ENV as the gateway gets it (every platform container takes it from the same
// ConfigMap key; env-references checks those).
func appEnv(r *rendered) string {
	for _, w := range platformDeployments(r) {
		if v, ok := envValue(r, w.spec.Containers[0], "APP_ENV"); ok {
			return v
		}
	}
	return ""
}

// checkDev: the dev overlay runs one replica of everything (and no autoscaler may add one), in
// development mode, with its own PostgreSQL and RabbitMQ.
func checkDev(t *testing.T, s *suite, r *rendered) {
	if r.flavor() != flavorDev {
		t.Skip("dev overlay only")
	}
	for _, d := range all[appsv1.Deployment](r) {
		a, scaled := autoscalerOf(r, d.Name)
		switch {
		case scaled && a.max != 1:
			t.Errorf("Deployment %s: %s may scale it to %d, want 1", d.Name, a.by, a.max)
		case !scaled && replicasOrOne(d.Spec.Replicas) != 1:
			t.Errorf("Deployment %s: replicas %s, want 1", d.Name, show(d.Spec.Replicas))
		}
	}
	for _, h := range all[autoscalingv2.HorizontalPodAutoscaler](r) {
		if h.Spec.MaxReplicas != 1 {
			t.Errorf("HorizontalPodAutoscaler %s: maxReplicas %d, want 1", h.Name, h.Spec.MaxReplicas)
		}
	}
	for _, so := range all[kedav1alpha1.ScaledObject](r) {
		if so.Spec.MaxReplicaCount == nil || *so.Spec.MaxReplicaCount != 1 {
			t.Errorf("ScaledObject %s: maxReplicaCount %s, want 1", so.Name, show(so.Spec.MaxReplicaCount))
		}
	}
	if env := appEnv(r); env != "development" {
		t.Errorf("APP_ENV=%q, want development", env)
	}
	for _, image := range []string{"postgres", "rabbitmq"} {
		found := false
		for _, sts := range all[appsv1.StatefulSet](r) {
			found = found || runsImage(pod{spec: &sts.Spec.Template.Spec}, image)
			if runsImage(pod{spec: &sts.Spec.Template.Spec}, image) && len(sts.Spec.VolumeClaimTemplates) == 0 {
				t.Errorf("StatefulSet %s: no volumeClaimTemplates: its data would die with the pod", sts.Name)
			}
		}
		if !found {
			t.Errorf("no StatefulSet runs %s", image)
		}
	}
}

// checkProduction: every HTTP service runs at least two replicas (and its HPA keeps two), every
// Deployment spreads over nodes, RabbitMQ runs three nodes and PostgreSQL three instances with
// synchronous replication, APP_ENV is production and no placeholder Secret is shipped.
func checkProduction(t *testing.T, s *suite, r *rendered) {
	if r.flavor() != flavorProduction {
		t.Skip("production overlay only")
	}
	for _, w := range platformDeployments(r) {
		count, by := replicasOrOne(w.replicas), "replicas"
		if a, ok := autoscalerOf(r, w.name); ok {
			count, by = a.min, a.by+" minimum"
		}
		if count < 2 {
			t.Errorf("%s: %s %d, want at least 2", w, by, count)
		}
	}
	for _, w := range longRunning(r) {
		if w.kind == "Deployment" && !spreadsOverNodes(w) {
			t.Errorf("%s: no pod anti-affinity on kubernetes.io/hostname selecting its own pods", w)
		}
	}
	for _, h := range all[autoscalingv2.HorizontalPodAutoscaler](r) {
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 {
			t.Errorf("HorizontalPodAutoscaler %s: minReplicas %s, want at least 2", h.Name, show(h.Spec.MinReplicas))
		}
	}
	rabbits := rabbitmqClusters(r)
	if len(rabbits) != 1 {
		t.Errorf("%d RabbitmqClusters, want 1", len(rabbits))
	}
	for _, c := range rabbits {
		if c.Spec.Replicas == nil || *c.Spec.Replicas != 3 {
			t.Errorf("RabbitmqCluster %s: replicas %s, want 3 (a quorum queue needs a majority)", c.Name, show(c.Spec.Replicas))
		}
		if _, tag, digest := splitImage(c.Spec.Image); digest == "" && (tag == "" || tag == "latest") {
			t.Errorf("RabbitmqCluster %s: image %q is not pinned", c.Name, c.Spec.Image)
		}
	}
	pgs := cnpgClusters(r)
	if len(pgs) != 1 {
		t.Errorf("%d CloudNativePG Clusters, want 1", len(pgs))
	}
	for _, c := range pgs {
		if c.Spec.Instances != 3 {
			t.Errorf("Cluster %s: instances %d, want 3", c.Name, c.Spec.Instances)
		}
		if !synchronous(c) {
			t.Errorf("Cluster %s: no synchronous replication (spec.postgresql.synchronous with number ≥ 1, or minSyncReplicas ≥ 1)", c.Name)
		}
		if _, tag, digest := splitImage(c.Spec.ImageName); digest == "" && (tag == "" || tag == "latest") {
			t.Errorf("Cluster %s: imageName %q is not pinned", c.Name, c.Spec.ImageName)
		}
	}
	if env := appEnv(r); env != "production" {
		t.Errorf("APP_ENV=%q, want production", env)
	}
	for _, ing := range all[networkingv1.Ingress](r) {
		if len(ing.Spec.TLS) == 0 {
			t.Errorf("Ingress %s: no TLS", ing.Name)
		}
	}
}

// spreadsOverNodes reports whether a workload's pods repel each other per node.
func spreadsOverNodes(w workload) bool {
	a := w.spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return false
	}
	terms := a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	for _, wt := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		terms = append(terms, wt.PodAffinityTerm)
	}
	for _, term := range terms {
		if term.TopologyKey == "kubernetes.io/hostname" && selects(term.LabelSelector, w.labels) {
			return true
		}
	}
	return false
}

// synchronous reports whether a CloudNativePG Cluster commits on a standby too, with either API.
func synchronous(c *cnpgv1.Cluster) bool {
	if sc := c.Spec.PostgresConfiguration.Synchronous; sc != nil {
		return sc.Number >= 1 && sc.Number < c.Spec.Instances
	}
	return c.Spec.MinSyncReplicas >= 1 && c.Spec.MaxSyncReplicas >= c.Spec.MinSyncReplicas
}
