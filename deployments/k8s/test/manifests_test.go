package k8stest

import "testing"

// check is one invariant of a rendered kustomization; it reports each offending object by kind
// and name.
type check struct {
	name string
	fn   func(t *testing.T, s *suite, r *rendered)
}

// checks are run against the base and every overlay, each as its own subtest
// (go test -run 'TestManifests/production/probes').
func checks() []check {
	return []check{
		{"binaries", checkBinaries},
		{"probes", checkProbes},
		{"resources", checkResources},
		{"security", checkSecurity},
		{"images", checkImages},
		{"listeners", checkListeners},
		{"drain", checkDrain},
		{"env-required", checkEnvRequired},
		{"env-known", checkEnvKnown},
		{"env-references", checkEnvReferences},
		{"config-values", checkConfigValues},
		{"services", checkServices},
		{"pdb", checkPDBs},
		{"hpa", checkHPAs},
		{"keda", checkKEDA},
		{"ingress", checkIngress},
		{"network-policies", checkNetworkPolicies},
		{"datastore-access", checkDatastoreAccess},
		{"egress", checkEgress},
		{"dev", checkDev},
		{"production", checkProduction},
		{"autoscaled-replicas", checkAutoscaledReplicas},
		{"keda-behaviour", checkKEDABehaviour},
		{"keda-host", checkKEDAHost},
		{"connection-budget", checkConnectionBudget},
		{"logical-decoding", checkLogicalDecoding},
		{"statefulsets", checkStatefulSets},
		{"kustomization-labels", checkKustomizationLabels},
		{"telephony", checkTelephonyAccess},
		{"broker-users", checkBrokerUsers},
		{"broker-operations", checkBrokerOperations},
		{"database-operations", checkDatabaseOperations},
		{"pod-monitors", checkPodMonitors},
		{"placeholders", checkPlaceholders},
		{"notification-channels", checkNotificationChannels},
		{"memory-limit", checkMemoryLimit},
		{"production-readme", checkProductionReadme},
	}
}

// TestManifests renders each kustomization and runs every check on it.
func TestManifests(t *testing.T) {
	s := newSuite(t)
	for _, dir := range kustomizations() {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			for _, c := range checks() {
				t.Run(c.name, func(t *testing.T) { c.fn(t, s, r) })
			}
		})
	}
}
