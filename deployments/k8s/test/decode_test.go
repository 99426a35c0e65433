package k8stest

import (
	"encoding/json"
	"errors"
	"fmt"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	rabbitmqv1beta1 "github.com/rabbitmq/cluster-operator/v2/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	sigsjson "sigs.k8s.io/json"
)

// object is one rendered object, decoded into its API type.
type object struct {
	apiVersion, kind, namespace, name string
	value                             any // a pointer to the API type, e.g. *appsv1.Deployment
}

func (o object) String() string { return fmt.Sprintf("%s %s/%s", o.kind, o.namespace, o.name) }

// newTyped returns an empty value of the Go API type of apiVersion and kind, or false for a kind
// the test does not know: such an object fails the test, because nothing here would check it.
// The operators' kinds use their projects' published API packages (KEDA, RabbitMQ Cluster
// Operator, CloudNativePG, Prometheus Operator), so a field they do not have is an error as for
// the built-in kinds; the Messaging Topology Operator's are held in topology_types_test.go.
func newTyped(apiVersion, kind string) (any, bool) {
	switch apiVersion + " " + kind {
	case "v1 Namespace":
		return &corev1.Namespace{}, true
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, true
	case "v1 Secret":
		return &corev1.Secret{}, true
	case "v1 Service":
		return &corev1.Service{}, true
	case "v1 PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}, true
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, true
	case "apps/v1 StatefulSet":
		return &appsv1.StatefulSet{}, true
	case "batch/v1 Job":
		return &batchv1.Job{}, true
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, true
	case "networking.k8s.io/v1 Ingress":
		return &networkingv1.Ingress{}, true
	case "networking.k8s.io/v1 NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, true
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, true
	case "keda.sh/v1alpha1 ScaledObject":
		return &kedav1alpha1.ScaledObject{}, true
	case "keda.sh/v1alpha1 TriggerAuthentication":
		return &kedav1alpha1.TriggerAuthentication{}, true
	case "rabbitmq.com/v1beta1 RabbitmqCluster":
		return &rabbitmqv1beta1.RabbitmqCluster{}, true
	case "postgresql.cnpg.io/v1 Cluster":
		return &cnpgv1.Cluster{}, true
	case "postgresql.cnpg.io/v1 ScheduledBackup":
		return &cnpgv1.ScheduledBackup{}, true
	case "postgresql.cnpg.io/v1 Pooler":
		return &cnpgv1.Pooler{}, true
	case "monitoring.coreos.com/v1 PodMonitor":
		return &monitoringv1.PodMonitor{}, true
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return &monitoringv1.ServiceMonitor{}, true
	case "monitoring.coreos.com/v1 PrometheusRule":
		return &monitoringv1.PrometheusRule{}, true
	case "rabbitmq.com/v1beta1 User":
		return &rabbitmqUser{}, true
	case "rabbitmq.com/v1beta1 Permission":
		return &rabbitmqPermission{}, true
	case "rabbitmq.com/v1beta1 Exchange":
		return &rabbitmqExchange{}, true
	case "rabbitmq.com/v1beta1 Binding":
		return &rabbitmqBinding{}, true
	}
	return nil, false
}

// decode reads one object (kustomize's JSON form of it) into its API type. Strict as the API
// server's strict field validation: field names match case-sensitively, and an unknown or
// duplicated field is an error, so a misspelt or misplaced field (readinesProbe, a probe under
// the pod instead of the container) cannot pass unnoticed.
func decode(data []byte) (object, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return object{}, err
	}
	o := object{apiVersion: head.APIVersion, kind: head.Kind, namespace: head.Metadata.Namespace, name: head.Metadata.Name}
	typed, ok := newTyped(head.APIVersion, head.Kind)
	if !ok {
		return o, fmt.Errorf("unknown kind %s %s: add its API type to newTyped and checks for it", head.APIVersion, head.Kind)
	}
	strict, err := sigsjson.UnmarshalStrict(data, typed)
	if err != nil {
		return o, err
	}
	if len(strict) > 0 {
		return o, fmt.Errorf("not a valid %s: %w", head.Kind, errors.Join(strict...))
	}
	o.value = typed
	return o, nil
}
