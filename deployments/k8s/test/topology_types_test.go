package k8stest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The RabbitMQ Messaging Topology Operator's kinds (rabbitmq.com/v1beta1 User, Permission,
// Exchange, Binding). Its API package pulls a controller-runtime that does not build beside
// KEDA's and CloudNativePG's, so the test holds the fields of its CRDs here: the decoding stays
// strict (a field they do not have is an error), only the Go type is local.

// rabbitmqClusterReference names the RabbitmqCluster an object belongs to.
type rabbitmqClusterReference struct {
	Name             string                       `json:"name,omitempty"`
	Namespace        string                       `json:"namespace,omitempty"`
	ConnectionSecret *corev1.LocalObjectReference `json:"connectionSecret,omitempty"`
}

type rabbitmqUser struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Tags                     []string                     `json:"tags,omitempty"`
		RabbitmqClusterReference rabbitmqClusterReference     `json:"rabbitmqClusterReference"`
		ImportCredentialsSecret  *corev1.LocalObjectReference `json:"importCredentialsSecret,omitempty"`
	} `json:"spec"`
}

type rabbitmqPermission struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Vhost         string                       `json:"vhost"`
		User          string                       `json:"user,omitempty"`
		UserReference *corev1.LocalObjectReference `json:"userReference,omitempty"`
		Permissions   struct {
			Configure string `json:"configure,omitempty"`
			Write     string `json:"write,omitempty"`
			Read      string `json:"read,omitempty"`
		} `json:"permissions"`
		RabbitmqClusterReference rabbitmqClusterReference `json:"rabbitmqClusterReference"`
	} `json:"spec"`
}

type rabbitmqExchange struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Name                     string                   `json:"name"`
		Vhost                    string                   `json:"vhost,omitempty"`
		Type                     string                   `json:"type,omitempty"`
		Durable                  bool                     `json:"durable,omitempty"`
		AutoDelete               bool                     `json:"autoDelete,omitempty"`
		Arguments                *runtime.RawExtension    `json:"arguments,omitempty"`
		RabbitmqClusterReference rabbitmqClusterReference `json:"rabbitmqClusterReference"`
	} `json:"spec"`
}

type rabbitmqBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Vhost                    string                   `json:"vhost,omitempty"`
		Source                   string                   `json:"source,omitempty"`
		Destination              string                   `json:"destination,omitempty"`
		DestinationType          string                   `json:"destinationType,omitempty"`
		RoutingKey               string                   `json:"routingKey,omitempty"`
		Arguments                *runtime.RawExtension    `json:"arguments,omitempty"`
		RabbitmqClusterReference rabbitmqClusterReference `json:"rabbitmqClusterReference"`
	} `json:"spec"`
}
