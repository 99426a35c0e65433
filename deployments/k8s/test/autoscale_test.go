package k8stest

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// autoscaled is the range an HPA or a ScaledObject keeps a Deployment in.
type autoscaled struct {
	by       string // "HorizontalPodAutoscaler x" or "ScaledObject x"
	min, max int32
}

// autoscalerOf returns what scales a Deployment, if anything.
func autoscalerOf(r *rendered, deployment string) (autoscaled, bool) {
	for _, h := range all[autoscalingv2.HorizontalPodAutoscaler](r) {
		if ref := h.Spec.ScaleTargetRef; ref.Kind == "Deployment" && ref.Name == deployment {
			minR := int32(1)
			if h.Spec.MinReplicas != nil {
				minR = *h.Spec.MinReplicas
			}
			return autoscaled{"HorizontalPodAutoscaler " + h.Name, minR, h.Spec.MaxReplicas}, true
		}
	}
	for _, so := range all[kedav1alpha1.ScaledObject](r) {
		if ref := so.Spec.ScaleTargetRef; ref != nil && ref.Name == deployment && (ref.Kind == "" || ref.Kind == "Deployment") {
			a := autoscaled{by: "ScaledObject " + so.Name, min: 0, max: 100} // KEDA's defaults
			if so.Spec.MinReplicaCount != nil {
				a.min = *so.Spec.MinReplicaCount
			}
			if so.Spec.MaxReplicaCount != nil {
				a.max = *so.Spec.MaxReplicaCount
			}
			return a, true
		}
	}
	return autoscaled{}, false
}

// checkAutoscaledReplicas: a Deployment that an HPA or KEDA scales sets no replicas. The
// autoscaler owns the count; every `kubectl apply` of a manifest that sets one resets it,
// dropping the pods the load had called for until the autoscaler notices again.
func checkAutoscaledReplicas(t *testing.T, s *suite, r *rendered) {
	for _, d := range all[appsv1.Deployment](r) {
		if a, ok := autoscalerOf(r, d.Name); ok && d.Spec.Replicas != nil {
			t.Errorf("Deployment %s: replicas %d, but %s owns its count: leave replicas out", d.Name, *d.Spec.Replicas, a.by)
		}
	}
}

// checkKEDABehaviour: cooldownPeriod only governs scaling to zero, so how fast a worker scales
// down is the HPA behaviour KEDA passes on (advanced.horizontalPodAutoscalerConfig.behavior):
// each ScaledObject sets a scale-down stabilization window. And each has a fallback: the
// replicas to hold, within its bounds, when the broker cannot be read.
func checkKEDABehaviour(t *testing.T, s *suite, r *rendered) {
	for _, so := range all[kedav1alpha1.ScaledObject](r) {
		var window *int32
		if adv := so.Spec.Advanced; adv != nil && adv.HorizontalPodAutoscalerConfig != nil {
			if b := adv.HorizontalPodAutoscalerConfig.Behavior; b != nil && b.ScaleDown != nil {
				window = b.ScaleDown.StabilizationWindowSeconds
			}
		}
		if window == nil || *window <= 0 {
			t.Errorf("ScaledObject %s: no advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds: cooldownPeriod does not delay a scale-down above zero", so.Name)
		}
		fb := so.Spec.Fallback
		if fb == nil {
			t.Errorf("ScaledObject %s: no fallback: a broker KEDA cannot read freezes the worker at its last count", so.Name)
			continue
		}
		if fb.FailureThreshold < 1 {
			t.Errorf("ScaledObject %s: fallback failureThreshold %d, want at least 1", so.Name, fb.FailureThreshold)
		}
		if a, ok := autoscalerOf(r, so.Spec.ScaleTargetRef.Name); ok && (fb.Replicas < a.min || fb.Replicas > a.max) {
			t.Errorf("ScaledObject %s: fallback replicas %d outside its bounds %d..%d", so.Name, fb.Replicas, a.min, a.max)
		}
	}
}

// reservedConnections are PostgreSQL's superuser_reserved_connections (its default, which no
// manifest changes): the platform's roles cannot use them.
const reservedConnections = 3

// defaultMaxConnections is PostgreSQL's max_connections when nothing sets it.
const defaultMaxConnections = 100

// checkConnectionBudget: every PostgreSQL connection the platform may open at once fits in the
// server's max_connections less the reserved ones. Each Deployment that reads DATABASE_URL
// counts its most pods (its autoscaler's maximum, or its replicas) plus the surge pod of a
// rollout, times its pool (DB_MAX_CONNS, or the binary's default); each Job its parallelism;
// each Pooler its instances × max_db_connections.
func checkConnectionBudget(t *testing.T, s *suite, r *rendered) {
	maxConns, where, ok := maxConnections(t, r)
	if !ok {
		t.Skip("no PostgreSQL in the render")
	}
	total := 0
	var parts []string
	for _, w := range workloads(r) {
		c := w.spec.Containers[0]
		b := s.binaries[binaryOf(c)]
		if !isPlatform(c) || b == nil || !b.reads("DATABASE_URL") {
			continue
		}
		pool, err := strconv.Atoi(b.env["DB_MAX_CONNS"].def)
		if v, set := envValue(r, c, "DB_MAX_CONNS"); set {
			pool, err = strconv.Atoi(v)
		}
		if err != nil || pool < 1 {
			t.Errorf("%s: DB_MAX_CONNS not a positive number", w)
			continue
		}
		pods := 1
		switch w.kind {
		case "Deployment":
			d := deployment(r, w.name)
			pods = int(replicasOrOne(d.Spec.Replicas))
			if a, scaled := autoscalerOf(r, w.name); scaled {
				pods = int(a.max)
			}
			pods += surge(d, pods)
		case "Job":
			for _, j := range all[batchv1.Job](r) {
				if j.Name == w.name && j.Spec.Parallelism != nil {
					pods = int(*j.Spec.Parallelism)
				}
			}
		}
		total += pods * pool
		parts = append(parts, w.String()+": "+strconv.Itoa(pods)+"×"+strconv.Itoa(pool))
	}
	for _, p := range all[cnpgv1.Pooler](r) {
		n, err := strconv.Atoi(p.Spec.PgBouncer.Parameters["max_db_connections"])
		if err != nil || n < 1 {
			t.Errorf("Pooler %s: pgbouncer max_db_connections unset: its server connections are unbounded", p.Name)
			continue
		}
		instances := 1
		if p.Spec.Instances != nil {
			instances = int(*p.Spec.Instances)
		}
		total += instances * n
		parts = append(parts, "Pooler "+p.Name+": "+strconv.Itoa(instances)+"×"+strconv.Itoa(n))
	}
	usable := maxConns - reservedConnections
	t.Logf("%d of %d usable connections (%s max_connections %d): %v", total, usable, where, maxConns, parts)
	if total > usable {
		t.Errorf("at the autoscalers' maxima plus each Deployment's rollout surge, the pools come to %d connections, over the %d usable (%s: max_connections %d less %d reserved): %v",
			total, usable, where, maxConns, reservedConnections, parts)
	}
}

// maxConnections is the max_connections of the render's PostgreSQL: a CloudNativePG Cluster's
// parameters, or the in-cluster server's "-c max_connections=N" argument.
func maxConnections(t *testing.T, r *rendered) (int, string, bool) {
	if clusters := cnpgClusters(r); len(clusters) > 0 {
		c := clusters[0] // checkProduction wants exactly one
		raw, ok := c.Spec.PostgresConfiguration.Parameters["max_connections"]
		if !ok {
			return defaultMaxConnections, "Cluster " + c.Name, true
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			t.Fatalf("Cluster %s: max_connections %q", c.Name, raw)
		}
		return n, "Cluster " + c.Name, true
	}
	arg := regexp.MustCompile(`^max_connections=(\d+)$`)
	for _, sts := range all[appsv1.StatefulSet](r) {
		if !runsImage(pod{spec: &sts.Spec.Template.Spec}, "postgres") {
			continue
		}
		for _, a := range sts.Spec.Template.Spec.Containers[0].Args {
			if m := arg.FindStringSubmatch(a); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n, "StatefulSet " + sts.Name, true
			}
		}
		return defaultMaxConnections, "StatefulSet " + sts.Name, true
	}
	return 0, "", false
}

// surge is how many pods above pods a rolling update may add (maxSurge; the API's default 25%,
// rounded up).
func surge(d *appsv1.Deployment, pods int) int {
	v := intstr.FromString("25%")
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
		v = *ru.MaxSurge
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return 0
	}
	if v.Type == intstr.Int {
		return v.IntValue()
	}
	pct, err := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	if err != nil {
		return pods
	}
	return int(math.Ceil(float64(pods) * float64(pct) / 100))
}

func replicasOrOne(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// checkLogicalDecoding: the render's PostgreSQL carries logical decoding (wal_level=logical) with
// a cap on the WAL a slot may hold back (max_slot_wal_keep_size), and the application's role may
// replicate: lead-api and lead-worker read the lead events through a logical slot.
func checkLogicalDecoding(t *testing.T, _ *suite, r *rendered) {
	want := map[string]bool{"wal_level": false, "max_slot_wal_keep_size": false}
	if clusters := cnpgClusters(r); len(clusters) > 0 {
		c := clusters[0]
		p := c.Spec.PostgresConfiguration.Parameters
		want["wal_level"] = p["wal_level"] == "logical"
		want["max_slot_wal_keep_size"] = p["max_slot_wal_keep_size"] != "" && p["max_slot_wal_keep_size"] != "-1"
		replicates := false
		if c.Spec.Managed != nil {
			for _, role := range c.Spec.Managed.Roles {
				if c.Spec.Bootstrap != nil && c.Spec.Bootstrap.InitDB != nil && role.Name == c.Spec.Bootstrap.InitDB.Owner {
					replicates = role.Replication && role.Login
				}
			}
		}
		if !replicates {
			t.Errorf("Cluster %s: the application's role may not replicate (managed.roles: replication: true)", c.Name)
		}
	} else {
		found := false
		for _, sts := range all[appsv1.StatefulSet](r) {
			if !runsImage(pod{spec: &sts.Spec.Template.Spec}, "postgres") {
				continue
			}
			found = true
			for _, a := range sts.Spec.Template.Spec.Containers[0].Args {
				if a == "wal_level=logical" {
					want["wal_level"] = true
				}
				if strings.HasPrefix(a, "max_slot_wal_keep_size=") && a != "max_slot_wal_keep_size=-1" {
					want["max_slot_wal_keep_size"] = true
				}
			}
		}
		if !found {
			t.Skip("no PostgreSQL in the render")
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("PostgreSQL: %s is not set for logical decoding", name)
		}
	}
}
