package k8stest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkDatabaseOperations: each CloudNativePG Cluster archives its WAL and base backups to an
// object store with credentials from a Secret (point-in-time recovery: docs/operations.md), a
// ScheduledBackup makes base backups of it, a PgBouncer Pooler stands in front of it, and a
// PodMonitor scrapes its instances and a PrometheusRule alerts on it.
func checkDatabaseOperations(t *testing.T, s *suite, r *rendered) {
	for _, c := range cnpgClusters(r) {
		b := c.Spec.Backup
		switch {
		case b == nil || b.BarmanObjectStore == nil:
			t.Errorf("Cluster %s: no backup.barmanObjectStore: no WAL archive, no point-in-time recovery", c.Name)
		default:
			store := b.BarmanObjectStore
			if store.DestinationPath == "" {
				t.Errorf("Cluster %s: barmanObjectStore without destinationPath", c.Name)
			}
			creds := store.BarmanCredentials
			hasSecretRefs := (creds.AWS != nil && creds.AWS.AccessKeyIDReference != nil && creds.AWS.SecretAccessKeyReference != nil) ||
				(creds.Azure != nil) || (creds.Google != nil)
			if !hasSecretRefs {
				t.Errorf("Cluster %s: barmanObjectStore credentials must come from Secret references", c.Name)
			}
			if store.Wal == nil {
				t.Errorf("Cluster %s: barmanObjectStore.wal unset: say how the WAL is archived (compression, parallelism)", c.Name)
			}
			if b.RetentionPolicy == "" {
				t.Errorf("Cluster %s: backup without retentionPolicy: the object store grows for ever", c.Name)
			}
		}
		scheduled := false
		for _, sb := range all[cnpgv1.ScheduledBackup](r) {
			scheduled = scheduled || sb.Spec.Cluster.Name == c.Name
		}
		if !scheduled {
			t.Errorf("Cluster %s: no ScheduledBackup: the WAL archive has no base backup to start from", c.Name)
		}
		pooled := false
		for _, p := range all[cnpgv1.Pooler](r) {
			pooled = pooled || p.Spec.Cluster.Name == c.Name
		}
		if !pooled {
			t.Errorf("Cluster %s: no PgBouncer Pooler", c.Name)
		}
		instance := map[string]string{"cnpg.io/cluster": c.Name, "cnpg.io/podRole": "instance"}
		if !podMonitored(r, instance, "metrics") {
			t.Errorf("Cluster %s: no PodMonitor scrapes its instances' port metrics", c.Name)
		}
		alerted := false
		for _, pr := range all[monitoringv1.PrometheusRule](r) {
			for _, g := range pr.Spec.Groups {
				for _, rule := range g.Rules {
					alerted = alerted || (rule.Alert != "" && strings.Contains(rule.Expr.String(), `cluster="`+c.Name+`"`))
				}
			}
		}
		if !alerted {
			t.Errorf("Cluster %s: no PrometheusRule alerts on its metrics", c.Name)
		}
	}
}

// podMonitored reports whether a PodMonitor of the render scrapes pods with these labels on the
// named port.
func podMonitored(r *rendered, podLabels map[string]string, port string) bool {
	for _, pm := range all[monitoringv1.PodMonitor](r) {
		sel := pm.Spec.Selector
		if !selects(&sel, podLabels) {
			continue
		}
		for _, ep := range pm.Spec.PodMetricsEndpoints {
			if ep.Port != nil && *ep.Port == port {
				return true
			}
		}
	}
	return false
}

// checkBrokerOperations: each RabbitmqCluster has a PodDisruptionBudget that lets one node go at
// a time (never two: a quorum queue keeps its majority), and spreads its nodes over zones.
func checkBrokerOperations(t *testing.T, s *suite, r *rendered) {
	for _, c := range rabbitmqClusters(r) {
		podLabels := map[string]string{nameLabel: c.Name, componentLabel: "rabbitmq"}
		var pdb *policyv1.PodDisruptionBudget
		for _, p := range all[policyv1.PodDisruptionBudget](r) {
			if selects(p.Spec.Selector, podLabels) {
				pdb = p
			}
		}
		if pdb == nil {
			t.Errorf("RabbitmqCluster %s: no PodDisruptionBudget: a drain may take two nodes at once", c.Name)
		} else if v := pdb.Spec.MaxUnavailable; v == nil || *v != intstr.FromInt32(1) {
			t.Errorf("PodDisruptionBudget %s: want maxUnavailable 1 for RabbitmqCluster %s", pdb.Name, c.Name)
		}
		spread := false
		if o := c.Spec.Override.StatefulSet; o != nil && o.Spec != nil && o.Spec.Template != nil && o.Spec.Template.Spec != nil {
			for _, tsc := range o.Spec.Template.Spec.TopologySpreadConstraints {
				spread = spread || (tsc.TopologyKey == "topology.kubernetes.io/zone" && selects(tsc.LabelSelector, podLabels))
			}
		}
		if !spread {
			t.Errorf("RabbitmqCluster %s: no topologySpreadConstraints over topology.kubernetes.io/zone selecting its pods (override.statefulSet)", c.Name)
		}
	}
}

// checkPodMonitors: where the Prometheus Operator is installed (production), every platform
// Deployment's pods are scraped by a PodMonitor on the port and path of their
// prometheus.io/* annotations (which a Prometheus without the operator keeps using).
func checkPodMonitors(t *testing.T, s *suite, r *rendered) {
	if r.flavor() != flavorProduction {
		t.Skip("production overlay only (the others do not assume the Prometheus Operator)")
	}
	for _, w := range platformDeployments(r) {
		c := w.spec.Containers[0]
		port := "http"
		if containerPort(c, "metrics") != 0 {
			port = "metrics"
		}
		found := false
		for _, pm := range all[monitoringv1.PodMonitor](r) {
			sel := pm.Spec.Selector
			if !selects(&sel, w.labels) {
				continue
			}
			for _, ep := range pm.Spec.PodMetricsEndpoints {
				path := ep.Path
				if path == "" {
					path = "/metrics"
				}
				found = found || (ep.Port != nil && *ep.Port == port && path == w.annots["prometheus.io/path"])
			}
		}
		if !found {
			t.Errorf("%s: no PodMonitor scrapes its port %s at %s", w, port, w.annots["prometheus.io/path"])
		}
	}
}

// checkProductionReadme: deployments/k8s/README.md names every Secret production takes from
// outside git, so that none is found missing only when its pods fail to start.
func checkProductionReadme(t *testing.T, s *suite, r *rendered) {
	if r.flavor() != flavorProduction {
		t.Skip("production overlay only")
	}
	raw, err := os.ReadFile(filepath.Join(k8sDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, name := range sortedKeys(externalSecretKeys(r)) {
		if operatorSecret(r, name) {
			continue
		}
		if !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("README.md does not name Secret %s (keys %v), which production needs from outside git", name, externalSecretKeys(r)[name])
			continue
		}
		for _, key := range productionSecrets()[name] {
			if !strings.Contains(readme, key) {
				t.Errorf("README.md names Secret %s but not its key %s", name, key)
			}
		}
	}
}

// operatorSecret reports whether an operator of the render makes that Secret.
func operatorSecret(r *rendered, name string) bool {
	for _, c := range cnpgClusters(r) {
		if name == c.Name+"-app" {
			return true
		}
	}
	for _, c := range rabbitmqClusters(r) {
		if name == c.Name+"-default-user" {
			return true
		}
	}
	return false
}
