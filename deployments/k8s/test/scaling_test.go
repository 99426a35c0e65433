package k8stest

import (
	"slices"
	"strconv"
	"testing"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// selects reports whether a label selector (nil or empty: nothing, as for PDBs and Services
// here, where an empty selector is always a mistake) matches a pod's labels.
func selects(sel *metav1.LabelSelector, podLabels map[string]string) bool {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(podLabels))
}

// checkServices: every Deployment's pods are behind a Service that selects only them, and every
// StatefulSet's serviceName exists. A platform Service answers on port 80 (what the *_URL
// settings use) and forwards to the container port "http"; the gateway's also has "metrics".
func checkServices(t *testing.T, s *suite, r *rendered) {
	for _, w := range longRunning(r) {
		var found []*corev1.Service
		for _, svc := range all[corev1.Service](r) {
			if len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(w.labels)) {
				found = append(found, svc)
			}
		}
		if len(found) == 0 {
			t.Errorf("%s: no Service selects its pods", w)
			continue
		}
		for _, svc := range found {
			for _, other := range longRunning(r) {
				if other.String() != w.String() && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(other.labels)) {
					t.Errorf("Service %s selects the pods of both %s and %s", svc.Name, w, other)
				}
			}
		}
		if w.kind == "StatefulSet" {
			if sts := statefulSet(r, w.name); service(r, sts.Spec.ServiceName) == nil {
				t.Errorf("%s: serviceName %q is no Service of the render", w, sts.Spec.ServiceName)
			}
		}
		if !isPlatform(w.spec.Containers[0]) {
			continue
		}
		want := []string{"http"}
		if containerPort(w.spec.Containers[0], "metrics") != 0 {
			want = append(want, "metrics")
		}
		for _, name := range want {
			if !servicePort(found, name, w.spec.Containers[0]) {
				t.Errorf("%s: no Service port %q forwarding to container port %q", w, name, name)
			}
		}
		if !servicePortNumber(found, "http", 80) {
			t.Errorf("%s: its Service must answer on port 80 (the *_URL settings name no port)", w)
		}
	}
}

func servicePort(svcs []*corev1.Service, name string, c corev1.Container) bool {
	for _, svc := range svcs {
		for _, p := range svc.Spec.Ports {
			if p.Name == name && resolvePort(c, p.TargetPort) == containerPort(c, name) {
				return true
			}
		}
	}
	return false
}

func servicePortNumber(svcs []*corev1.Service, name string, port int32) bool {
	for _, svc := range svcs {
		for _, p := range svc.Spec.Ports {
			if p.Name == name && p.Port == port {
				return true
			}
		}
	}
	return false
}

func statefulSet(r *rendered, name string) *appsv1.StatefulSet {
	for _, s := range all[appsv1.StatefulSet](r) {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// checkPDBs: every Deployment has a PodDisruptionBudget selecting its pods that still lets a node
// drain (maxUnavailable ≥ 1, or minAvailable below the replicas); every PDB selects something.
func checkPDBs(t *testing.T, s *suite, r *rendered) {
	pdbs := all[policyv1.PodDisruptionBudget](r)
	for _, w := range longRunning(r) {
		if w.kind != "Deployment" {
			continue
		}
		var found *policyv1.PodDisruptionBudget
		for _, p := range pdbs {
			if selects(p.Spec.Selector, w.labels) {
				found = p
			}
		}
		if found == nil {
			t.Errorf("%s: no PodDisruptionBudget selects its pods", w)
			continue
		}
		replicas := int(replicasOrOne(w.replicas))
		if a, ok := autoscalerOf(r, w.name); ok {
			replicas = int(a.min)
		}
		switch {
		case found.Spec.MaxUnavailable != nil:
			if v := found.Spec.MaxUnavailable; (v.Type == intstr.Int && v.IntVal < 1) || v.String() == "0%" {
				t.Errorf("PodDisruptionBudget %s: maxUnavailable %s blocks every eviction of %s", found.Name, v.String(), w)
			}
		case found.Spec.MinAvailable != nil:
			if v := found.Spec.MinAvailable; v.Type == intstr.Int && int(v.IntVal) >= replicas || v.String() == "100%" {
				t.Errorf("PodDisruptionBudget %s: minAvailable %s with %d replicas blocks every eviction of %s", found.Name, v.String(), replicas, w)
			}
		default:
			t.Errorf("PodDisruptionBudget %s: neither maxUnavailable nor minAvailable", found.Name)
		}
	}
	for _, p := range pdbs {
		matched := false
		for _, w := range pods(s, r) {
			matched = matched || selects(p.Spec.Selector, w.labels)
		}
		if !matched {
			t.Errorf("PodDisruptionBudget %s selects no pods of the render", p.Name)
		}
	}
}

// checkHPAs: every HTTP Deployment has one HPA on CPU utilization whose bounds hold its replicas;
// the workers have none (KEDA makes theirs: two would fight); every HPA targets a Deployment.
func checkHPAs(t *testing.T, s *suite, r *rendered) {
	hpas := all[autoscalingv2.HorizontalPodAutoscaler](r)
	for _, w := range platformDeployments(r) {
		bin := binaryOf(w.spec.Containers[0])
		var found []*autoscalingv2.HorizontalPodAutoscaler
		for _, h := range hpas {
			ref := h.Spec.ScaleTargetRef
			if ref.Kind == "Deployment" && ref.Name == w.name {
				found = append(found, h)
				if ref.APIVersion != "apps/v1" {
					t.Errorf("HorizontalPodAutoscaler %s: scaleTargetRef apiVersion %q, want apps/v1", h.Name, ref.APIVersion)
				}
			}
		}
		if s.isWorker(bin) {
			if len(found) > 0 {
				t.Errorf("%s: a worker must have no HorizontalPodAutoscaler of its own (its ScaledObject makes one), found %s", w, found[0].Name)
			}
			continue
		}
		if len(found) != 1 {
			t.Errorf("%s: %d HorizontalPodAutoscalers, want 1", w, len(found))
			continue
		}
		h := found[0]
		minR := int32(1)
		if h.Spec.MinReplicas != nil {
			minR = *h.Spec.MinReplicas
		}
		if minR < 1 || minR > h.Spec.MaxReplicas {
			t.Errorf("HorizontalPodAutoscaler %s: minReplicas %d, maxReplicas %d", h.Name, minR, h.Spec.MaxReplicas)
		}
		if w.replicas != nil && (*w.replicas < minR || *w.replicas > h.Spec.MaxReplicas) {
			t.Errorf("%s: replicas %d outside its HPA's %d..%d", w, *w.replicas, minR, h.Spec.MaxReplicas)
		}
		if !cpuUtilization(h) {
			t.Errorf("HorizontalPodAutoscaler %s: no cpu Utilization metric", h.Name)
		}
	}
	for _, h := range hpas {
		if ref := h.Spec.ScaleTargetRef; ref.Kind != "Deployment" || deployment(r, ref.Name) == nil {
			t.Errorf("HorizontalPodAutoscaler %s: targets %s %s, which is no Deployment of the render", h.Name, ref.Kind, ref.Name)
		}
	}
}

func cpuUtilization(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	for _, m := range h.Spec.Metrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Target.Type == autoscalingv2.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil {
			return true
		}
	}
	return false
}

func deployment(r *rendered, name string) *appsv1.Deployment {
	for _, d := range all[appsv1.Deployment](r) {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// checkKEDA: every worker has one ScaledObject with a rabbitmq trigger (queue length, over AMQP,
// authenticated by an existing TriggerAuthentication that supplies the host) for each queue it
// consumes, exactly those in the sources, and bounds with min ≥ 1 (the gateway's health check
// wants a consumer on every queue) and min ≤ max. No ScaledObject targets anything else.
func checkKEDA(t *testing.T, s *suite, r *rendered) {
	sos := all[kedav1alpha1.ScaledObject](r)
	for _, worker := range s.workers() {
		var found []*kedav1alpha1.ScaledObject
		for _, so := range sos {
			if ref := so.Spec.ScaleTargetRef; ref != nil && ref.Name == worker && (ref.Kind == "" || ref.Kind == "Deployment") {
				found = append(found, so)
			}
		}
		if len(found) != 1 {
			t.Errorf("Deployment %s: %d ScaledObjects, want 1", worker, len(found))
			continue
		}
		so := found[0]
		var queues []string
		for i, tr := range so.Spec.Triggers {
			what := "ScaledObject " + so.Name + " trigger " + strconv.Itoa(i)
			if tr.Type != "rabbitmq" {
				t.Errorf("%s: type %q, want rabbitmq", what, tr.Type)
				continue
			}
			queues = append(queues, tr.Metadata["queueName"])
			if tr.Metadata["mode"] != "QueueLength" {
				t.Errorf("%s: mode %q, want QueueLength", what, tr.Metadata["mode"])
			}
			if n, err := strconv.Atoi(tr.Metadata["value"]); err != nil || n < 1 {
				t.Errorf("%s: value %q, want a positive message count", what, tr.Metadata["value"])
			}
			if tr.Metadata["protocol"] != "amqp" {
				t.Errorf("%s: protocol %q, want amqp (the platform's broker URL)", what, tr.Metadata["protocol"])
			}
			if tr.AuthenticationRef == nil || !triggerAuthWithHost(r, tr.AuthenticationRef) {
				t.Errorf("%s: authenticationRef must name a TriggerAuthentication of the render that sets host", what)
			}
		}
		slices.Sort(queues)
		if !slices.Equal(queues, s.queues[worker]) {
			t.Errorf("ScaledObject %s: queues %v, but %s consumes %v (the sources' queue constants)", so.Name, queues, worker, s.queues[worker])
		}
		minR, maxR := so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount
		switch {
		case minR == nil || maxR == nil:
			t.Errorf("ScaledObject %s: minReplicaCount and maxReplicaCount must both be set", so.Name)
		case *minR < 1:
			t.Errorf("ScaledObject %s: minReplicaCount %d: the gateway's health check wants a consumer on each queue", so.Name, *minR)
		case *maxR < 1 || *minR > *maxR:
			t.Errorf("ScaledObject %s: minReplicaCount %d, maxReplicaCount %d", so.Name, *minR, *maxR)
		}
	}
	for _, so := range sos {
		if ref := so.Spec.ScaleTargetRef; ref == nil || !s.isWorker(ref.Name) || deployment(r, ref.Name) == nil {
			t.Errorf("ScaledObject %s targets no worker Deployment of the render", so.Name)
		}
	}
}

func triggerAuthWithHost(r *rendered, ref *kedav1alpha1.AuthenticationRef) bool {
	if ref.Kind != "" && ref.Kind != "TriggerAuthentication" {
		return false
	}
	for _, ta := range all[kedav1alpha1.TriggerAuthentication](r) {
		if ta.Name != ref.Name {
			continue
		}
		for _, p := range ta.Spec.SecretTargetRef {
			if p.Parameter == "host" {
				return true
			}
		}
	}
	return false
}
