package k8stest

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// restrictedEgress lists the binaries whose egress the NetworkPolicies restrict, each with the
// TCP ports it may open on public internet addresses. Every other pod's egress stays open
// (deployments/k8s/README.md). The webhook dispatcher POSTs to partners' HTTPS endpoints, URLs its
// users choose: it is the one binary with internet egress in the policies, on 443 only, beside its
// own SSRF guard (services/webhook/internal/urlguard).
func restrictedEgress() map[string][]string {
	return map[string][]string{"webhook-dispatcher": {"443"}}
}

// privateRanges are the ranges a restricted pod's internet egress must except, by address family:
// private (RFC 1918, fc00::/7), loopback, link-local (cloud metadata) and CGNAT; and NAT64's
// prefixes (64:ff9b::/96 and the local-use 64:ff9b:1::/48), which embed an IPv4 address, so
// that 64:ff9b::10.0.0.1 would reach a private IPv4 address through the cluster's NAT64.
var privateRanges = map[string][]string{
	"0.0.0.0/0": {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8", "100.64.0.0/10"},
	"::/0":      {"fc00::/7", "fe80::/10", "64:ff9b::/96", "64:ff9b:1::/48"},
}

// clusterDNS is the peer of the cluster's DNS (CoreDNS under its kube-dns labels), as egressTo
// names it.
const clusterDNS = "namespace:kube-system pods:k8s-app=kube-dns"

// egressTo computes the destinations the render's NetworkPolicies let source open connections
// to: "pod:<name>" of the universe, namespace peers as admitted names them, "ipBlock:<cidr>"
// (with " except private ranges" when it excepts every one of privateRanges, else its except
// list), "any"; each with its ports ("http", "5432", "53/UDP", "all").
func egressTo(r *rendered, universe []pod, source pod) (out sources, governed bool) {
	out = sources{}
	add := func(dst string, ports []string) {
		for _, p := range ports {
			if !slices.Contains(out[dst], p) {
				out[dst] = append(out[dst], p)
			}
		}
		slices.Sort(out[dst])
	}
	for _, np := range all[networkingv1.NetworkPolicy](r) {
		if !governsEgress(np) || !selectsOrAll(&np.Spec.PodSelector, source.labels) {
			continue
		}
		governed = true
		for _, rule := range np.Spec.Egress {
			ports := func(dst pod) []string {
				if len(rule.Ports) == 0 {
					return []string{"all"}
				}
				var out []string
				for _, p := range rule.Ports {
					name := portName(dst, p)
					if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
						name += "/" + string(*p.Protocol)
					}
					out = append(out, name)
				}
				return out
			}
			if len(rule.To) == 0 {
				add("any", ports(pod{}))
			}
			for _, peer := range rule.To {
				switch {
				case peer.IPBlock != nil:
					add(ipBlockName(peer.IPBlock), ports(pod{}))
				case peer.NamespaceSelector != nil:
					dst := "namespaces:" + metav1.FormatLabelSelector(peer.NamespaceSelector)
					if ns, ok := peer.NamespaceSelector.MatchLabels[namespaceNameLabel]; ok && len(peer.NamespaceSelector.MatchLabels) == 1 && len(peer.NamespaceSelector.MatchExpressions) == 0 {
						dst = "namespace:" + ns
					}
					if peer.PodSelector != nil {
						dst += " pods:" + metav1.FormatLabelSelector(peer.PodSelector)
					}
					add(dst, ports(pod{}))
				case peer.PodSelector != nil:
					for _, p := range universe {
						if p.name != source.name && selectsOrAll(peer.PodSelector, p.labels) {
							add("pod:"+p.name, ports(p))
						}
					}
				}
			}
		}
	}
	return out, governed
}

// ipBlockName names an ipBlock peer; one excepting every private range of its family (and maybe
// more) is "ipBlock:<cidr> except private ranges".
func ipBlockName(b *networkingv1.IPBlock) string {
	if want, ok := privateRanges[b.CIDR]; ok {
		all := true
		for _, cidr := range want {
			all = all && slices.Contains(b.Except, cidr)
		}
		if all {
			return "ipBlock:" + b.CIDR + " except private ranges"
		}
	}
	if len(b.Except) == 0 {
		return "ipBlock:" + b.CIDR
	}
	except := slices.Clone(b.Except)
	slices.Sort(except)
	return "ipBlock:" + b.CIDR + " except " + strings.Join(except, ",")
}

// governsEgress reports whether a policy restricts egress (policyTypes, or its default: Egress
// when it has egress rules).
func governsEgress(np *networkingv1.NetworkPolicy) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return len(np.Spec.Egress) > 0
	}
	return slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
}

// checkEgress: only the binaries of restrictedEgress have their egress restricted (the test
// cannot hold another pod's egress to what it needs), and theirs is exactly what they need: the
// cluster DNS (UDP and TCP 53); each pod of the render that admits them (their callees and
// datastores: network-policies and datastore-access hold those to the sources) on the ports it
// admits them on; and, on their internet ports only, 0.0.0.0/0 and ::/0 except the private
// ranges. No other address block, namespace or "any" destination.
func checkEgress(t *testing.T, s *suite, r *rendered) {
	universe := pods(s, r)
	deployed := map[string]bool{}
	for _, w := range platformDeployments(r) {
		deployed[binaryOf(w.spec.Containers[0])] = true
	}
	for _, src := range universe {
		internetPorts, listed := restrictedEgress()[src.name]
		got, governed := egressTo(r, universe, src)
		if !listed {
			if governed {
				t.Errorf("%s pods: a NetworkPolicy restricts their egress, but restrictedEgress does not list %s: the test cannot hold it to what it needs", src.name, src.name)
			}
			continue
		}
		if !deployed[src.name] {
			continue // checkBinaries reports it
		}
		if !governed {
			t.Errorf("%s pods: no NetworkPolicy restricts their egress (policyTypes [Egress]): they may reach any address on any port", src.name)
			continue
		}
		want := sources{clusterDNS: {"53", "53/UDP"}}
		for _, dst := range universe {
			if dst.name == src.name {
				continue
			}
			if ports := admitted(t, r, universe, dst)["pod:"+src.name]; len(ports) > 0 {
				want["pod:"+dst.name] = ports
			}
		}
		if len(internetPorts) > 0 {
			for _, cidr := range sortedKeys(privateRanges) {
				want["ipBlock:"+cidr+" except private ranges"] = slices.Sorted(slices.Values(internetPorts))
			}
		}
		if got.String() != want.String() {
			t.Errorf("%s pods: NetworkPolicies let them reach %s,\n\twant %s (the cluster DNS, the pods that admit them on those ports, and %v on public addresses: 0.0.0.0/0 and ::/0 except %v)",
				src.name, got, want, internetPorts, privateRanges)
		}
	}
}
