package k8stest

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// telephonyQueues are the queues the telephony platform publishes to: telephony.calls (read
// from pkg/telephony) and telephony.agents (its agents' states; no consumer in the sources yet).
func telephonyQueues(t *testing.T) []string {
	t.Helper()
	calls, err := stringConst(repoRoot, "pkg/telephony/telephony.go", "Queue")
	if err != nil {
		t.Fatalf("telephony queue: %v", err)
	}
	return []string{calls, "telephony.agents"}
}

// telephonyNamespaceLabel marks the namespace of the telephony platform (or of its stand-in) in
// a cluster where it runs in-cluster (dev).
const telephonyNamespaceLabel = "callcenter/telephony-platform"

// checkKEDAHost: the broker URL KEDA reads queue depths with names the broker by its full name
// (<service>.<namespace>.svc[.cluster.local]): KEDA's operator resolves it from its own
// namespace, where a short Service name means nothing. Checked where the render holds the value.
func checkKEDAHost(t *testing.T, s *suite, r *rendered) {
	for _, ta := range all[kedav1alpha1.TriggerAuthentication](r) {
		for _, ref := range ta.Spec.SecretTargetRef {
			if ref.Parameter != "host" {
				continue
			}
			raw, ok := secretValue(r, ref.Name, ref.Key)
			if !ok {
				continue // made outside the render (production): the README says what it holds
			}
			u, err := url.Parse(raw)
			if err != nil || u.Host == "" {
				t.Errorf("TriggerAuthentication %s: host from Secret %s key %s is no URL", ta.Name, ref.Name, ref.Key)
				continue
			}
			parts := strings.Split(u.Hostname(), ".")
			if len(parts) < 3 || parts[1] != ta.Namespace || parts[2] != "svc" {
				t.Errorf("TriggerAuthentication %s: host %s (Secret %s key %s) does not resolve from KEDA's namespace: use <service>.%s.svc.cluster.local",
					ta.Name, u.Hostname(), ref.Name, ref.Key, ta.Namespace)
			}
		}
	}
}

// secretValue is a Secret key's value when the render holds the Secret.
func secretValue(r *rendered, name, key string) (string, bool) {
	for _, sec := range all[corev1.Secret](r) {
		if sec.Name != name {
			continue
		}
		if v, ok := sec.Data[key]; ok {
			return string(v), true
		}
		if v, ok := sec.StringData[key]; ok {
			return v, true
		}
	}
	return "", false
}

// checkTelephonyAccess: the telephony platform, the main producer, can publish to its queues.
// The broker's pods admit it (a namespace labelled telephonyNamespaceLabel, or an address block
// for a platform outside the cluster) on the port the platform's binaries use; where the broker
// is the operator's (production), a Service exposes that port outside the cluster, and the
// platform has a broker user that may write to an exchange bound to each of its queues and do
// nothing else (no configure, no read).
func checkTelephonyAccess(t *testing.T, s *suite, r *rendered) {
	universe := pods(s, r)
	for _, p := range universe {
		if !strings.HasPrefix(p.name, "rabbitmq:") && !runsImage(p, "rabbitmq") {
			continue
		}
		got := admitted(t, r, universe, p)
		// The port the platform's own clients are admitted on (datastore-access holds them).
		var clientPorts []string
		for _, bin := range s.readers("AMQP_URL") {
			if ports := got["pod:"+bin]; len(ports) > 0 {
				clientPorts = ports
			}
		}
		found := false
		for src, ports := range got {
			if src == "namespaces:"+telephonyNamespaceLabel+"=true" || strings.HasPrefix(src, "ipBlock:") {
				found = found || (len(clientPorts) > 0 && slices.Equal(ports, clientPorts))
			}
		}
		if !found {
			t.Errorf("%s pods: the telephony platform cannot reach them: no NetworkPolicy admits a namespace labelled %s=true or an ipBlock on the clients' port %v (%s)",
				p.name, telephonyNamespaceLabel, clientPorts, got)
		}
	}
	for _, c := range rabbitmqClusters(r) {
		exposed := false
		for _, svc := range all[corev1.Service](r) {
			if (svc.Spec.Type == corev1.ServiceTypeLoadBalancer || svc.Spec.Type == corev1.ServiceTypeNodePort) &&
				len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set{nameLabel: c.Name, componentLabel: "rabbitmq"}) {
				exposed = true
			}
		}
		if !exposed {
			t.Errorf("RabbitmqCluster %s: no LoadBalancer or NodePort Service exposes it to the telephony platform outside the cluster", c.Name)
		}
		checkTelephonyUser(t, r, telephonyQueues(t))
	}
}

// checkTelephonyUser: a broker User whose Permission writes only to exchanges bound to the
// telephony queues, covers every one of them, and neither configures nor reads.
func checkTelephonyUser(t *testing.T, r *rendered, queues []string) {
	bound := map[string][]string{} // exchange → queues bound to it
	for _, b := range all[rabbitmqBinding](r) {
		if b.Spec.DestinationType == "queue" {
			bound[b.Spec.Source] = append(bound[b.Spec.Source], b.Spec.Destination)
		}
	}
	exchanges := map[string]bool{}
	for _, e := range all[rabbitmqExchange](r) {
		exchanges[e.Spec.Name] = true
	}
	found := false
	for _, perm := range all[rabbitmqPermission](r) {
		p := perm.Spec.Permissions
		write, err := regexp.Compile(p.Write)
		if err != nil || p.Write == "" || write.MatchString("amq.default") {
			continue // writes nothing, or any queue through the default exchange: a platform user
		}
		var reach []string
		for ex, qs := range bound {
			if write.MatchString(ex) {
				reach = append(reach, qs...)
			}
		}
		covers := true
		for _, q := range queues {
			covers = covers && slices.Contains(reach, q)
		}
		if !covers {
			continue
		}
		// The user that reaches the telephony queues through their exchange: only that.
		found = true
		for _, q := range reach {
			if !slices.Contains(queues, q) {
				t.Errorf("Permission %s: write %q reaches queue %s too, beyond the telephony queues %v", perm.Name, p.Write, q, queues)
			}
		}
		for ex := range bound {
			if write.MatchString(ex) && !exchanges[ex] {
				t.Errorf("Permission %s: exchange %s is bound but declared by no Exchange of the render", perm.Name, ex)
			}
		}
		if !emptyPermission(p.Configure) || !emptyPermission(p.Read) {
			t.Errorf("Permission %s: configure %q, read %q: the telephony platform only publishes", perm.Name, p.Configure, p.Read)
		}
		if u := permissionUser(r, perm); u == nil || u.Spec.ImportCredentialsSecret == nil {
			t.Errorf("Permission %s: no User of the render with credentials from a Secret", perm.Name)
		}
	}
	if !found {
		t.Errorf("no broker Permission writes only to an exchange bound to every telephony queue %v (Topology Operator Exchange, Binding, User and Permission; the default exchange would reach every queue)", queues)
	}
}

// emptyPermission reports whether a permission regular expression matches no resource name.
func emptyPermission(re string) bool { return re == "" || re == "^$" }

func permissionUser(r *rendered, perm *rabbitmqPermission) *rabbitmqUser {
	for _, u := range all[rabbitmqUser](r) {
		if ref := perm.Spec.UserReference; ref != nil && ref.Name == u.Name {
			return u
		}
	}
	return nil
}

// checkBrokerUsers: where the broker is the operator's, each binary that reads AMQP_URL has a
// broker user of its own (Topology Operator User with its credentials from a Secret, and a
// Permission) and takes AMQP_URL from that Secret's url; the broker serves TLS and admits the
// binaries on its AMQPS port only (5671), and each binary trusts the broker's CA. KEDA's user
// reads exactly the workers' queues.
func checkBrokerUsers(t *testing.T, s *suite, r *rendered) {
	clusters := rabbitmqClusters(r)
	if len(clusters) == 0 {
		t.Skip("no RabbitmqCluster")
	}
	for _, c := range clusters {
		if c.Spec.TLS.SecretName == "" {
			t.Errorf("RabbitmqCluster %s: no tls.secretName: AMQP crosses the network in clear", c.Name)
		}
		universe := pods(s, r)
		got := admitted(t, r, universe, pod{name: "rabbitmq:" + c.Name, labels: map[string]string{nameLabel: c.Name, componentLabel: "rabbitmq"}})
		for _, bin := range s.readers("AMQP_URL") {
			if ports := got["pod:"+bin]; !slices.Equal(ports, []string{"5671"}) {
				t.Errorf("RabbitmqCluster %s: %s admitted on %v, want the AMQPS port 5671 only", c.Name, bin, ports)
			}
		}
	}
	users := map[string]*rabbitmqUser{}
	for _, u := range all[rabbitmqUser](r) {
		if u.Spec.ImportCredentialsSecret != nil {
			users[u.Spec.ImportCredentialsSecret.Name] = u
		}
	}
	permitted := map[string]bool{}
	for _, p := range all[rabbitmqPermission](r) {
		if p.Spec.UserReference != nil {
			permitted[p.Spec.UserReference.Name] = true
		}
	}
	for _, w := range platformDeployments(r) {
		c := w.spec.Containers[0]
		bin := binaryOf(c)
		if b := s.binaries[bin]; b == nil || !b.reads("AMQP_URL") {
			continue
		}
		var ref *corev1.SecretKeySelector
		for _, e := range c.Env {
			if e.Name == "AMQP_URL" && e.ValueFrom != nil {
				ref = e.ValueFrom.SecretKeyRef
			}
		}
		if ref == nil || ref.Key != "url" || users[ref.Name] == nil {
			t.Errorf("%s: AMQP_URL must come from key url of the Secret of a broker User of its own", w)
		} else if u := users[ref.Name]; u.Name != bin || !permitted[u.Name] {
			t.Errorf("%s: AMQP_URL from Secret %s, the credentials of User %s: want a User named %s with a Permission", w, ref.Name, u.Name, bin)
		}
		if !trustsBrokerCA(r, w, c) {
			t.Errorf("%s: does not trust the broker's CA: SSL_CERT_DIR must list a mount of the RabbitmqCluster's TLS Secret's ca.crt", w)
		}
	}
	for _, bin := range s.readers("AMQP_URL") {
		if cliBinaries()[bin] && !permitted[bin] {
			t.Errorf("%s reads AMQP_URL but has no broker User and Permission named after it", bin)
		}
	}
	checkKEDAPermission(t, s, r)
}

// trustsBrokerCA reports whether a container mounts the broker's CA (the RabbitmqCluster's TLS
// Secret's ca.crt) in a directory SSL_CERT_DIR lists.
func trustsBrokerCA(r *rendered, w workload, c corev1.Container) bool {
	dirs, ok := envValue(r, c, "SSL_CERT_DIR")
	if !ok {
		return false
	}
	for _, cluster := range rabbitmqClusters(r) {
		for _, m := range c.VolumeMounts {
			if !slices.Contains(strings.Split(dirs, ":"), m.MountPath) {
				continue
			}
			for _, v := range w.spec.Volumes {
				if v.Name != m.Name || v.Secret == nil || v.Secret.SecretName != cluster.Spec.TLS.SecretName {
					continue
				}
				for _, item := range v.Secret.Items {
					if item.Key == "ca.crt" {
						return true
					}
				}
				if len(v.Secret.Items) == 0 {
					return true
				}
			}
		}
	}
	return false
}

// checkKEDAPermission: the User whose credentials KEDA's TriggerAuthentication uses reads every
// worker queue and configures and writes nothing.
func checkKEDAPermission(t *testing.T, s *suite, r *rendered) {
	for _, ta := range all[kedav1alpha1.TriggerAuthentication](r) {
		for _, ref := range ta.Spec.SecretTargetRef {
			if ref.Parameter != "host" {
				continue
			}
			var user *rabbitmqUser
			for _, u := range all[rabbitmqUser](r) {
				if u.Spec.ImportCredentialsSecret != nil && u.Spec.ImportCredentialsSecret.Name == ref.Name {
					user = u
				}
			}
			if user == nil {
				t.Errorf("TriggerAuthentication %s: Secret %s is no broker User's credentials", ta.Name, ref.Name)
				continue
			}
			for _, p := range all[rabbitmqPermission](r) {
				if p.Spec.UserReference == nil || p.Spec.UserReference.Name != user.Name {
					continue
				}
				read, err := regexp.Compile(p.Spec.Permissions.Read)
				for _, q := range s.allQueues() {
					if err != nil || !read.MatchString(q) {
						t.Errorf("Permission %s: KEDA's user cannot read queue %s (read %q)", p.Name, q, p.Spec.Permissions.Read)
					}
				}
				if !emptyPermission(p.Spec.Permissions.Configure) || !emptyPermission(p.Spec.Permissions.Write) {
					t.Errorf("Permission %s: KEDA only reads queue depths: configure and write must be empty", p.Name)
				}
			}
		}
	}
}
