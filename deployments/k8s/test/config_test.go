package k8stest

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// checkConfigValues: the settings the render decides agree with the sources and with each other:
// each service URL names that service's Service and one of its ports; in an overlay, every URL to
// PostgreSQL or RabbitMQ names a Service of the render (where the render holds the value); the gateway
// monitors exactly the workers' queues and requires no more consumers than KEDA keeps running.
func checkConfigValues(t *testing.T, s *suite, r *rendered) {
	for _, w := range platformDeployments(r) {
		c := w.spec.Containers[0]
		for variable, svc := range serviceURLVars() {
			raw, ok := envValue(r, c, variable)
			if !ok {
				continue
			}
			checkServiceURL(t, r, w.String()+": "+variable, raw, svc)
		}
		// The base brings no PostgreSQL or RabbitMQ (its URLs are placeholders); an overlay does.
		for _, variable := range []string{"DATABASE_URL", "AMQP_URL"} {
			if raw, ok := envValue(r, c, variable); ok && r.flavor() != flavorBase {
				checkServiceURL(t, r, w.String()+": "+variable, raw, "")
			}
		}
		if raw, ok := envValue(r, c, "MONITORED_QUEUES"); ok {
			if got, want := splitSorted(raw), s.allQueues(); !slices.Equal(got, want) {
				t.Errorf("%s: MONITORED_QUEUES=%q, want the workers' queues %v", w, raw, want)
			}
		}
		if raw, ok := envValue(r, c, "QUEUE_CONSUMERS"); ok {
			checkQueueConsumers(t, s, r, w, raw)
		}
		for _, variable := range writableDirVars() {
			if !s.binaries[binaryOf(c)].reads(variable) {
				continue
			}
			dir, ok := envValue(r, c, variable)
			if !ok || !onWritableVolume(w.spec, c, dir) {
				t.Errorf("%s: %s=%q must name a directory on a writable volume mount (the root file system is read-only)", w, variable, dir)
			}
		}
	}
}

// writableDirVars name directories a binary writes files into; unset, they default to the
// system's temporary directory, which the read-only root file system refuses.
func writableDirVars() []string { return []string{"IMPORT_SPOOL_DIR"} }

// onWritableVolume reports whether dir is at or under a volume mount of c that is not read-only.
func onWritableVolume(spec *corev1.PodSpec, c corev1.Container, dir string) bool {
	if dir == "" {
		return false
	}
	for _, m := range c.VolumeMounts {
		if m.ReadOnly || (dir != m.MountPath && !strings.HasPrefix(dir, strings.TrimSuffix(m.MountPath, "/")+"/")) {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && (v.EmptyDir != nil || v.PersistentVolumeClaim != nil || v.Ephemeral != nil) {
				return true
			}
		}
	}
	return false
}

// checkServiceURL: raw's host is a Service of the render (want, if not empty) and its port one of
// that Service's ports.
func checkServiceURL(t *testing.T, r *rendered, what, raw, want string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Errorf("%s=%q: not an absolute URL", what, raw)
		return
	}
	// <service>, <service>.<namespace>, <service>.<namespace>.svc[.cluster.local]
	svcName, _, _ := strings.Cut(u.Hostname(), ".")
	if want != "" && svcName != want {
		t.Errorf("%s=%q: host %s, want the %s Service", what, raw, u.Hostname(), want)
		return
	}
	svc := service(r, svcName)
	if svc == nil {
		if want != "" || !operatorService(r, svcName) {
			t.Errorf("%s=%q: no Service %s in the render", what, raw, svcName)
		}
		return
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "amqp": "5672", "postgres": "5432", "postgresql": "5432"}[u.Scheme]
	}
	for _, p := range svc.Spec.Ports {
		if strconv.Itoa(int(p.Port)) == port {
			return
		}
	}
	t.Errorf("%s=%q: Service %s has no port %s", what, raw, svcName, port)
}

// operatorService reports whether an operator of the render makes a Service of that name.
func operatorService(r *rendered, name string) bool {
	for _, c := range cnpgClusters(r) {
		if name == c.Name+"-rw" || name == c.Name+"-ro" || name == c.Name+"-r" {
			return true
		}
	}
	for _, c := range rabbitmqClusters(r) {
		if name == c.Name {
			return true
		}
	}
	return false
}

// checkQueueConsumers: QUEUE_CONSUMERS (queue:count,...) names exactly the workers' queues, and
// no count exceeds the replicas KEDA keeps of that queue's worker (each replica holds at least one
// consumer), or the gateway's health check would fail at the minimum scale.
func checkQueueConsumers(t *testing.T, s *suite, r *rendered, w workload, raw string) {
	t.Helper()
	counts := map[string]int{}
	for _, item := range strings.Split(raw, ",") {
		q, n, ok := strings.Cut(strings.TrimSpace(item), ":")
		count, err := strconv.Atoi(n)
		if !ok || err != nil || count < 1 {
			t.Errorf("%s: QUEUE_CONSUMERS item %q: want queue:count", w, item)
			continue
		}
		counts[q] = count
	}
	if got, want := sortedKeys(counts), s.allQueues(); !slices.Equal(got, want) {
		t.Errorf("%s: QUEUE_CONSUMERS names %v, want the workers' queues %v", w, got, want)
	}
	for _, worker := range s.workers() {
		so := scaledObjectFor(r, worker)
		if so == nil || so.Spec.MinReplicaCount == nil {
			continue // checkKEDA reports it
		}
		for _, q := range s.queues[worker] {
			if counts[q] > int(*so.Spec.MinReplicaCount) {
				t.Errorf("%s: QUEUE_CONSUMERS wants %d consumers on %s, but ScaledObject %s may scale %s down to %d",
					w, counts[q], q, so.Name, worker, *so.Spec.MinReplicaCount)
			}
		}
	}
}

func service(r *rendered, name string) *corev1.Service {
	for _, svc := range all[corev1.Service](r) {
		if svc.Name == name {
			return svc
		}
	}
	return nil
}

func scaledObjectFor(r *rendered, deployment string) *kedav1alpha1.ScaledObject {
	for _, so := range all[kedav1alpha1.ScaledObject](r) {
		if so.Spec.ScaleTargetRef != nil && so.Spec.ScaleTargetRef.Name == deployment {
			return so
		}
	}
	return nil
}

// splitSorted splits a comma-separated list, trimmed and sorted.
func splitSorted(raw string) []string {
	var out []string
	for _, item := range strings.Split(raw, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	slices.Sort(out)
	return out
}
