package k8stest

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// workload is a pod template of a Deployment, StatefulSet or Job.
type workload struct {
	kind, name string
	replicas   *int32 // nil for a Job
	labels     map[string]string
	spec       *corev1.PodSpec
	annots     map[string]string
}

func (w workload) String() string { return w.kind + " " + w.name }

// workloads lists the pod templates of the render.
func workloads(r *rendered) []workload {
	var out []workload
	for _, d := range all[appsv1.Deployment](r) {
		out = append(out, workload{"Deployment", d.Name, d.Spec.Replicas, d.Spec.Template.Labels, &d.Spec.Template.Spec, d.Spec.Template.Annotations})
	}
	for _, s := range all[appsv1.StatefulSet](r) {
		out = append(out, workload{"StatefulSet", s.Name, s.Spec.Replicas, s.Spec.Template.Labels, &s.Spec.Template.Spec, s.Spec.Template.Annotations})
	}
	for _, j := range all[batchv1.Job](r) {
		out = append(out, workload{"Job", j.Name, nil, j.Spec.Template.Labels, &j.Spec.Template.Spec, j.Spec.Template.Annotations})
	}
	return out
}

// longRunning are the Deployments and StatefulSets: what probes, PDBs and Services are for.
func longRunning(r *rendered) []workload {
	var out []workload
	for _, w := range workloads(r) {
		if w.kind != "Job" {
			out = append(out, w)
		}
	}
	return out
}

// platformDeployments are the Deployments running the platform's image, with the binary each
// runs (its container's command).
func platformDeployments(r *rendered) []workload {
	var out []workload
	for _, w := range workloads(r) {
		if w.kind == "Deployment" && isPlatform(w.spec.Containers[0]) {
			out = append(out, w)
		}
	}
	return out
}

// podContainer is one container of a pod template, with how messages name it.
type podContainer struct {
	what string // "container x" or "init container x"
	c    *corev1.Container
}

// containers are a pod's init containers and containers.
func containers(spec *corev1.PodSpec) []podContainer {
	var out []podContainer
	for i := range spec.InitContainers {
		out = append(out, podContainer{"init container " + spec.InitContainers[i].Name, &spec.InitContainers[i]})
	}
	for i := range spec.Containers {
		out = append(out, podContainer{"container " + spec.Containers[i].Name, &spec.Containers[i]})
	}
	return out
}

// isPlatform reports whether a container runs the platform's image.
func isPlatform(c corev1.Container) bool {
	name, _, _ := splitImage(c.Image)
	return name == platformImage
}

// binaryOf is the binary a platform container runs: its command's first word (the image has
// every binary in /usr/local/bin; its default CMD would start the gateway).
func binaryOf(c corev1.Container) string {
	if len(c.Command) == 0 {
		return ""
	}
	return c.Command[0]
}

// splitImage splits an image reference into name, tag and digest ("" when absent). The tag is
// after the last colon of the last path element, so a registry port is not a tag.
func splitImage(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	slash := strings.LastIndex(name, "/")
	if colon := strings.LastIndex(name, ":"); colon > slash {
		name, tag = name[:colon], name[colon+1:]
	}
	return name, tag, digest
}

// checkBinaries: every long-running binary of the workspace runs in exactly one Deployment named
// after it, and every platform container runs a binary that exists.
func checkBinaries(t *testing.T, s *suite, r *rendered) {
	running := map[string]string{}
	for _, w := range workloads(r) {
		for _, cc := range containers(w.spec) {
			if !isPlatform(*cc.c) {
				continue
			}
			bin := binaryOf(*cc.c)
			if _, ok := s.binaries[bin]; !ok {
				t.Errorf("%s %s: command %q is no binary of the image (known: %v)", w, cc.what, cc.c.Command, sortedKeys(s.binaries))
				continue
			}
			if w.kind != "Deployment" {
				continue
			}
			if prev, dup := running[bin]; dup {
				t.Errorf("%s and %s both run %s", prev, w, bin)
			}
			running[bin] = w.String()
			if w.name != bin || w.labels[nameLabel] != bin {
				t.Errorf("%s runs %s: name it and label its pods %s=%s, as the Services, policies and autoscalers expect", w, bin, nameLabel, bin)
			}
			want := "http"
			if s.isWorker(bin) {
				want = "worker"
			}
			if w.labels[componentLabel] != want {
				t.Errorf("%s: pod label %s=%q, want %q", w, componentLabel, w.labels[componentLabel], want)
			}
		}
	}
	for _, name := range sortedKeys(s.binaries) {
		if _, ok := running[name]; !ok && !cliBinaries()[name] {
			t.Errorf("binary %s (%s) has no Deployment", name, s.binaries[name].importPath)
		}
	}
}

// checkProbes: every container of a Deployment or StatefulSet says when it is ready and when it
// is alive. Init containers cannot have probes (the API server refuses them) unless they are
// sidecars (restartPolicy Always), which then run for the pod's life and need them too.
func checkProbes(t *testing.T, s *suite, r *rendered) {
	for _, w := range longRunning(r) {
		for _, cc := range containers(w.spec) {
			c := cc.c
			isInit := strings.HasPrefix(cc.what, "init ")
			if isInit && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
			if c.ReadinessProbe == nil {
				t.Errorf("%s %s: no readinessProbe", w, cc.what)
			}
			if c.LivenessProbe == nil {
				t.Errorf("%s %s: no livenessProbe", w, cc.what)
			}
			if !isPlatform(*c) {
				continue
			}
			// The platform's endpoints (docs/operations.md): /readyz turns 503 while draining,
			// /livez only says the process runs; swapping them would restart draining pods.
			if p := c.ReadinessProbe; p != nil && (p.HTTPGet == nil || p.HTTPGet.Path != "/readyz") {
				t.Errorf("%s %s: readinessProbe must be httpGet /readyz", w, cc.what)
			}
			if p := c.LivenessProbe; p != nil && (p.HTTPGet == nil || p.HTTPGet.Path != "/livez") {
				t.Errorf("%s %s: livenessProbe must be httpGet /livez", w, cc.what)
			}
		}
	}
}

// checkResources: every container (init containers too) requests and is limited in CPU and
// memory, and requests no more than its limit.
func checkResources(t *testing.T, s *suite, r *rendered) {
	for _, w := range workloads(r) {
		for _, cc := range containers(w.spec) {
			res := cc.c.Resources
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := res.Requests[name]
				lim, hasLim := res.Limits[name]
				if !hasReq {
					t.Errorf("%s %s: no %s request", w, cc.what, name)
				}
				if !hasLim {
					t.Errorf("%s %s: no %s limit", w, cc.what, name)
				}
				if hasReq && hasLim && req.Cmp(lim) > 0 {
					t.Errorf("%s %s: %s request %s exceeds its limit %s", w, cc.what, name, req.String(), lim.String())
				}
			}
		}
	}
}

// checkSecurity: no container runs as root, writes its image, escalates privileges or keeps a
// capability; pods use the runtime's seccomp profile and get no service-account token (nothing
// here talks to the Kubernetes API). The platform's pods run as the Dockerfile's user.
func checkSecurity(t *testing.T, s *suite, r *rendered) {
	for _, w := range workloads(r) {
		pod := w.spec.SecurityContext
		if pod == nil {
			pod = &corev1.PodSecurityContext{}
		}
		if w.spec.AutomountServiceAccountToken == nil || *w.spec.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false", w)
		}
		podSeccomp := pod.SeccompProfile != nil && pod.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
		for _, cc := range containers(w.spec) {
			sc := cc.c.SecurityContext
			if sc == nil {
				t.Errorf("%s %s: no securityContext", w, cc.what)
				continue
			}
			if !boolOr(sc.RunAsNonRoot, pod.RunAsNonRoot) {
				t.Errorf("%s %s: runAsNonRoot must be true (container or pod)", w, cc.what)
			}
			if uid := int64Or(sc.RunAsUser, pod.RunAsUser); uid == nil || *uid == 0 {
				t.Errorf("%s %s: runAsUser must be a non-zero uid (runAsNonRoot needs a numeric user to check)", w, cc.what)
			} else if isPlatform(*cc.c) && *uid != platformUID {
				t.Errorf("%s %s: runAsUser %d, want the image's user %d", w, cc.what, *uid, platformUID)
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s %s: readOnlyRootFilesystem must be true", w, cc.what)
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s %s: allowPrivilegeEscalation must be false", w, cc.what)
			}
			if sc.Privileged != nil && *sc.Privileged {
				t.Errorf("%s %s: privileged", w, cc.what)
			}
			if sc.Capabilities == nil || !dropsAll(sc.Capabilities.Drop) || len(sc.Capabilities.Add) > 0 {
				t.Errorf("%s %s: capabilities must drop [ALL] and add none", w, cc.what)
			}
			containerSeccomp := sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
			if !podSeccomp && !containerSeccomp {
				t.Errorf("%s %s: seccompProfile must be RuntimeDefault (pod or container)", w, cc.what)
			}
		}
		if isPlatform(w.spec.Containers[0]) && (pod.FSGroup == nil || *pod.FSGroup != platformUID) {
			t.Errorf("%s: pod fsGroup must be %d", w, platformUID)
		}
	}
}

// checkImages: every image is pinned after kustomize's image transformer (a tag other than
// latest, or a digest), so that all pods of a Deployment run the same code; the platform runs one
// image reference in the whole render (one release).
func checkImages(t *testing.T, s *suite, r *rendered) {
	platformRefs := map[string]string{}
	for _, w := range workloads(r) {
		for _, cc := range containers(w.spec) {
			name, tag, digest := splitImage(cc.c.Image)
			switch {
			case digest != "":
				if !strings.HasPrefix(digest, "sha256:") {
					t.Errorf("%s %s: image %q: digest must be sha256:...", w, cc.what, cc.c.Image)
				}
			case tag == "" || tag == "latest":
				t.Errorf("%s %s: image %q is not pinned (a version tag or a digest, never latest)", w, cc.what, cc.c.Image)
			}
			if name == platformImage {
				platformRefs[cc.c.Image] = w.String()
			}
		}
	}
	if len(platformRefs) > 1 {
		t.Errorf("the platform's containers run different images: %v", platformRefs)
	}
}

// checkListeners: each platform container listens on all interfaces (the binaries default to
// 127.0.0.1, unreachable from the kubelet and the Service), on the port its probes, Service and
// scrape annotation use. The gateway serves /metrics only on METRICS_ADDR.
func checkListeners(t *testing.T, s *suite, r *rendered) {
	for _, w := range platformDeployments(r) {
		c := w.spec.Containers[0]
		b := s.binaries[binaryOf(c)]
		if b == nil {
			continue // checkBinaries reports it
		}
		httpPort, ok := listenPort(t, r, w, c, "HTTP_ADDR")
		if !ok {
			continue
		}
		if p := containerPort(c, "http"); p != httpPort {
			t.Errorf("%s: HTTP_ADDR listens on %d, but container port \"http\" is %d", w, httpPort, p)
		}
		for _, probe := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
			if probe != nil && probe.HTTPGet != nil && resolvePort(c, probe.HTTPGet.Port) != httpPort {
				t.Errorf("%s: probe %s on port %s, not the HTTP_ADDR port %d", w, probe.HTTPGet.Path, probe.HTTPGet.Port.String(), httpPort)
			}
		}
		metricsPort := httpPort
		if b.reads("METRICS_ADDR") {
			if metricsPort, ok = listenPort(t, r, w, c, "METRICS_ADDR"); !ok {
				continue
			}
			if p := containerPort(c, "metrics"); p != metricsPort {
				t.Errorf("%s: METRICS_ADDR listens on %d, but container port \"metrics\" is %d", w, metricsPort, p)
			}
		}
		if w.annots["prometheus.io/scrape"] != "true" || w.annots["prometheus.io/path"] != "/metrics" {
			t.Errorf("%s: pod annotations prometheus.io/scrape \"true\" and prometheus.io/path /metrics missing", w)
		}
		if got := w.annots["prometheus.io/port"]; got != strconv.Itoa(int(metricsPort)) {
			t.Errorf("%s: prometheus.io/port %q, but /metrics is served on %d", w, got, metricsPort)
		}
	}
}

// listenPort is the port of a listen-address variable the container sets; it must bind all
// interfaces.
func listenPort(t *testing.T, r *rendered, w workload, c corev1.Container, variable string) (int32, bool) {
	t.Helper()
	addr, ok := envValue(r, c, variable)
	if !ok {
		t.Errorf("%s: %s not set (the binary's default binds 127.0.0.1)", w, variable)
		return 0, false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Errorf("%s: %s=%q: %v", w, variable, addr, err)
		return 0, false
	}
	if host != "" && host != "0.0.0.0" && host != "::" {
		t.Errorf("%s: %s=%q must listen on all interfaces (0.0.0.0)", w, variable, addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Errorf("%s: %s=%q: port %v", w, variable, addr, err)
		return 0, false
	}
	return int32(n), true
}

// workTimeouts name, per binary, the settings that bound one unit of its in-flight work beyond
// the common margin: after SIGTERM the pod finishes what it holds, and a send cut short by
// SIGKILL is sent again by the next worker (notification-worker), a request cut short fails.
func workTimeouts() map[string][]string {
	return map[string][]string{
		"gateway":             {"UPSTREAM_TIMEOUT"},
		"lead-api":            {"JOB_CONFIRM_TIMEOUT"},
		"notification-worker": {"DELIVERY_SEND_TIMEOUT"},
	}
}

// checkDrain: the kubelet's SIGKILL comes after DRAIN_DELAY (answering /readyz 503 while still
// serving) and the time to finish in-flight work: the longest of a common margin (requests,
// message batches) and the binary's own work timeouts (workTimeouts: their values in the
// render, or the binary's defaults), computed for every Deployment.
func checkDrain(t *testing.T, s *suite, r *rendered) {
	const workMargin = 15 * time.Second
	for _, w := range platformDeployments(r) {
		c := w.spec.Containers[0]
		raw, ok := envValue(r, c, "DRAIN_DELAY")
		if !ok {
			t.Errorf("%s: DRAIN_DELAY not set: without it a pod keeps receiving requests after SIGTERM until its endpoints are gone", w)
			continue
		}
		drain, err := time.ParseDuration(raw)
		if err != nil || drain <= 0 {
			t.Errorf("%s: DRAIN_DELAY=%q must be a positive duration", w, raw)
			continue
		}
		work, why := workMargin, "a margin to finish work"
		bin := binaryOf(c)
		for _, variable := range workTimeouts()[bin] {
			b := s.binaries[bin]
			if b == nil || !b.reads(variable) {
				t.Errorf("workTimeouts: %s does not read %s", bin, variable)
				continue
			}
			v, set := envValue(r, c, variable)
			if !set {
				v = b.env[variable].def
			}
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Errorf("%s: %s=%q is no duration", w, variable, v)
				continue
			}
			if d > work {
				work, why = d, variable
			}
		}
		grace := 30 * time.Second // the API's default
		if g := w.spec.TerminationGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		if grace <= drain+work {
			t.Errorf("%s: terminationGracePeriodSeconds %s is not longer than DRAIN_DELAY %s + %s (%s): SIGKILL would cut in-flight work", w, grace, drain, work, why)
		}
	}
}

// checkMemoryLimit: every platform container is memory-limited and gets MEMORY_LIMIT from its
// own limits.memory (downward API, in bytes), from which the process sets the Go runtime's
// soft limit (pkg/app): without it the heap grows to the OOM killer before the collector hurries.
func checkMemoryLimit(t *testing.T, s *suite, r *rendered) {
	for _, w := range platformDeployments(r) {
		c := w.spec.Containers[0]
		if b := s.binaries[binaryOf(c)]; b == nil || !b.reads("MEMORY_LIMIT") {
			t.Errorf("%s: its binary does not read MEMORY_LIMIT (pkg/app.Process)", w)
			continue
		}
		var ref *corev1.ResourceFieldSelector
		for _, e := range c.Env {
			if e.Name == "MEMORY_LIMIT" && e.ValueFrom != nil {
				ref = e.ValueFrom.ResourceFieldRef
			}
		}
		switch {
		case ref == nil:
			t.Errorf("%s: MEMORY_LIMIT must come from the downward API (resourceFieldRef limits.memory)", w)
		case ref.Resource != "limits.memory" || (ref.ContainerName != "" && ref.ContainerName != c.Name):
			t.Errorf("%s: MEMORY_LIMIT from %s of container %q, want its own limits.memory", w, ref.Resource, ref.ContainerName)
		case !ref.Divisor.IsZero() && ref.Divisor.Value() != 1:
			t.Errorf("%s: MEMORY_LIMIT divisor %s: the process reads bytes (divisor 1)", w, ref.Divisor.String())
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			t.Errorf("%s: no memory limit for MEMORY_LIMIT to report", w)
		}
	}
}

// containerPort is the number of a named container port, 0 if none.
func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// resolvePort turns a port by name or number into its number.
func resolvePort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	return containerPort(c, p.StrVal)
}

func boolOr(a, b *bool) bool {
	if a != nil {
		return *a
	}
	return b != nil && *b
}

func int64Or(a, b *int64) *int64 {
	if a != nil {
		return a
	}
	return b
}

func dropsAll(caps []corev1.Capability) bool {
	for _, c := range caps {
		if c == "ALL" {
			return true
		}
	}
	return false
}
