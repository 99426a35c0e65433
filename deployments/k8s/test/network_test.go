package k8stest

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespaces the NetworkPolicies admit traffic from.
const (
	ingressNamespace    = "ingress-nginx" // the ingress controller's
	monitoringNamespace = "monitoring"    // Prometheus's
	kedaNamespace       = "keda"          // KEDA's operator, which reads queue depths
	namespaceNameLabel  = "kubernetes.io/metadata.name"
)

// checkIngress: an Ingress routes to the gateway's public port only, on the nginx class, for a
// named host; and the gateway is reachable through one.
func checkIngress(t *testing.T, s *suite, r *rendered) {
	ingresses := all[networkingv1.Ingress](r)
	if len(ingresses) == 0 {
		t.Errorf("no Ingress: the gateway is unreachable from outside")
	}
	for _, ing := range ingresses {
		if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" {
			t.Errorf("Ingress %s: ingressClassName must be nginx", ing.Name)
		}
		var backends []*networkingv1.IngressBackend
		if ing.Spec.DefaultBackend != nil {
			backends = append(backends, ing.Spec.DefaultBackend)
		}
		for _, rule := range ing.Spec.Rules {
			if rule.Host == "" {
				t.Errorf("Ingress %s: a rule without host answers every name", ing.Name)
			}
			if rule.HTTP == nil {
				continue
			}
			for i := range rule.HTTP.Paths {
				backends = append(backends, &rule.HTTP.Paths[i].Backend)
			}
		}
		for _, b := range backends {
			if b.Service == nil {
				t.Errorf("Ingress %s: routes to a resource backend; only the gateway Service may be public", ing.Name)
				continue
			}
			if b.Service.Name != "gateway" {
				t.Errorf("Ingress %s: routes to Service %s; only the gateway Service may be public", ing.Name, b.Service.Name)
				continue
			}
			if b.Service.Port.Name != "http" && b.Service.Port.Number != 80 {
				t.Errorf("Ingress %s: routes to gateway port %q/%d; only its public port (http, 80) may be public", ing.Name, b.Service.Port.Name, b.Service.Port.Number)
			}
		}
	}
}

// pod is a set of pods a NetworkPolicy may admit or protect: a workload of the render, a binary
// run outside it (ccadmin by kubectl run), or an operator's pods.
type pod struct {
	name   string // the name label, or what the operator's pods are
	labels map[string]string
	spec   *corev1.PodSpec // nil for pods not in the render
}

// pods are every pod the render's namespace may hold.
func pods(s *suite, r *rendered) []pod {
	var out []pod
	inRender := map[string]bool{}
	for _, w := range workloads(r) {
		out = append(out, pod{name: w.labels[nameLabel], labels: w.labels, spec: w.spec})
		inRender[w.labels[nameLabel]] = true
	}
	for _, name := range sortedKeys(s.binaries) {
		if !inRender[name] {
			out = append(out, pod{name: name, labels: map[string]string{nameLabel: name}})
		}
	}
	for _, c := range cnpgClusters(r) {
		out = append(out, pod{name: "cnpg:" + c.Name, labels: map[string]string{"cnpg.io/cluster": c.Name, "cnpg.io/podRole": "instance"}})
	}
	for _, c := range rabbitmqClusters(r) {
		out = append(out, pod{name: "rabbitmq:" + c.Name, labels: map[string]string{nameLabel: c.Name, componentLabel: "rabbitmq"}})
	}
	return out
}

// sources is what the NetworkPolicies admit to a pod: for each source ("pod:<name>",
// "namespace:<name>", "any", ...) the ports ("http", "5432", "all"), by name where the pod names
// them.
type sources map[string][]string

func (src sources) String() string {
	var parts []string
	for _, k := range sortedKeys(src) {
		parts = append(parts, k+" → "+strings.Join(src[k], ","))
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

// admitted computes the sources the render's NetworkPolicies admit to target.
func admitted(t *testing.T, r *rendered, universe []pod, target pod) sources {
	t.Helper()
	out := sources{}
	add := func(src string, ports []string) {
		for _, p := range ports {
			if !slices.Contains(out[src], p) {
				out[src] = append(out[src], p)
			}
		}
		slices.Sort(out[src])
	}
	for _, np := range all[networkingv1.NetworkPolicy](r) {
		if !governsIngress(np) || !selectsOrAll(&np.Spec.PodSelector, target.labels) {
			continue
		}
		for _, rule := range np.Spec.Ingress {
			ports := []string{"all"}
			if len(rule.Ports) > 0 {
				ports = nil
				for _, p := range rule.Ports {
					ports = append(ports, portName(target, p))
				}
			}
			if len(rule.From) == 0 {
				add("any", ports)
			}
			for _, peer := range rule.From {
				switch {
				case peer.IPBlock != nil:
					add("ipBlock:"+peer.IPBlock.CIDR, ports)
				case peer.NamespaceSelector != nil:
					src := "namespaces:" + metav1.FormatLabelSelector(peer.NamespaceSelector)
					if ns, ok := peer.NamespaceSelector.MatchLabels[namespaceNameLabel]; ok && len(peer.NamespaceSelector.MatchLabels) == 1 && len(peer.NamespaceSelector.MatchExpressions) == 0 {
						src = "namespace:" + ns
					}
					if peer.PodSelector != nil {
						src += " pods:" + metav1.FormatLabelSelector(peer.PodSelector)
					}
					add(src, ports)
				case peer.PodSelector != nil:
					for _, p := range universe {
						if selectsOrAll(peer.PodSelector, p.labels) {
							add("pod:"+p.name, ports)
						}
					}
				}
			}
		}
	}
	return out
}

// governsIngress reports whether a policy restricts ingress (policyTypes, or its default:
// Ingress always).
func governsIngress(np *networkingv1.NetworkPolicy) bool {
	return len(np.Spec.PolicyTypes) == 0 || slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
}

// selectsOrAll is a NetworkPolicy selector's meaning: empty selects every pod.
func selectsOrAll(sel *metav1.LabelSelector, podLabels map[string]string) bool {
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return true
	}
	return selects(sel, podLabels)
}

// portName names a policy port by the target's container port name where it has one.
func portName(target pod, p networkingv1.NetworkPolicyPort) string {
	if p.Port == nil {
		return "all"
	}
	if p.Port.StrVal != "" {
		return p.Port.StrVal
	}
	if target.spec != nil {
		for _, c := range target.spec.Containers {
			for _, cp := range c.Ports {
				if cp.ContainerPort == p.Port.IntVal && cp.Name != "" && p.EndPort == nil {
					return cp.Name
				}
			}
		}
	}
	s := strconv.Itoa(int(p.Port.IntVal))
	if p.EndPort != nil {
		s += "-" + strconv.Itoa(int(*p.EndPort))
	}
	return s
}

// checkNetworkPolicies: ingress is denied by default, and each platform pod admits exactly what
// it needs: a service its callers (the binaries that read its URL variable, from the sources)
// on its http port; the gateway the ingress controller on http; every pod Prometheus on its
// metrics port; a worker nobody else.
func checkNetworkPolicies(t *testing.T, s *suite, r *rendered) {
	if !hasDefaultDeny(r) {
		t.Errorf("no NetworkPolicy denies ingress by default (podSelector {}, policyTypes [Ingress], no rules)")
	}
	universe := pods(s, r)
	for _, w := range platformDeployments(r) {
		bin := binaryOf(w.spec.Containers[0])
		want := sources{}
		metricsPort := "http"
		if containerPort(w.spec.Containers[0], "metrics") != 0 {
			metricsPort = "metrics"
		}
		want["namespace:"+monitoringNamespace] = []string{metricsPort}
		switch {
		case bin == "gateway":
			want["namespace:"+ingressNamespace] = []string{"http"}
		case !s.isWorker(bin):
			for _, caller := range s.callers(bin) {
				want["pod:"+caller] = []string{"http"}
			}
		}
		got := admitted(t, r, universe, pod{name: bin, labels: w.labels, spec: w.spec})
		if got.String() != want.String() {
			t.Errorf("%s: NetworkPolicies admit %s,\n\twant %s (callers of %s in the sources: %v)", w, got, want, bin, s.callers(bin))
		}
	}
}

func hasDefaultDeny(r *rendered) bool {
	for _, np := range all[networkingv1.NetworkPolicy](r) {
		sel := np.Spec.PodSelector
		if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 && governsIngress(np) && len(np.Spec.Ingress) == 0 {
			return true
		}
	}
	return false
}

// checkDatastoreAccess: PostgreSQL admits exactly the binaries that read DATABASE_URL, RabbitMQ
// exactly those that read AMQP_URL (and KEDA's namespace): whether in-cluster StatefulSets (dev)
// or the operators' pods (production). The base has neither.
func checkDatastoreAccess(t *testing.T, s *suite, r *rendered) {
	universe := pods(s, r)
	for _, p := range universe {
		var variable string
		switch {
		case strings.HasPrefix(p.name, "cnpg:") || runsImage(p, "postgres"):
			variable = "DATABASE_URL"
		case strings.HasPrefix(p.name, "rabbitmq:") || runsImage(p, "rabbitmq"):
			variable = "AMQP_URL"
		default:
			continue
		}
		got := admitted(t, r, universe, p)
		var binaries []string
		for src := range got {
			if name, ok := strings.CutPrefix(src, "pod:"); ok {
				if _, isBinary := s.binaries[name]; isBinary {
					binaries = append(binaries, name)
				}
			}
		}
		slices.Sort(binaries)
		if want := s.readers(variable); !slices.Equal(binaries, want) {
			t.Errorf("%s pods: NetworkPolicies admit the binaries %v, want those that read %s: %v", p.name, binaries, variable, want)
		}
		if _, open := got["any"]; open {
			t.Errorf("%s pods: a NetworkPolicy admits any source: %s", p.name, got)
		}
		if variable == "AMQP_URL" {
			if _, ok := got["namespace:"+kedaNamespace]; !ok {
				t.Errorf("%s pods: KEDA (namespace %s) cannot read the queue depths: %s", p.name, kedaNamespace, got)
			}
		}
	}
}

// runsImage reports whether a pod of the render runs an image of that name (any registry).
func runsImage(p pod, image string) bool {
	if p.spec == nil {
		return false
	}
	for _, c := range p.spec.Containers {
		name, _, _ := splitImage(c.Image)
		if name == image || strings.HasSuffix(name, "/"+image) {
			return true
		}
	}
	return false
}
