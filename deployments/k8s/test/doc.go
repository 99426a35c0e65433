// Package k8stest holds the tests of the Kubernetes manifests in deployments/k8s: they render
// the base and every overlay with the kustomize Go API, decode each object strictly into its API
// type, and hold the result to the platform's Go sources (the environment each binary reads, the
// queues the workers consume, who calls whom). Everything is in the _test.go files:
//
//	cd deployments/k8s/test && GOWORK=off go test ./...
//
// The module stays outside go.work so that the workspace does not inherit the Kubernetes and
// operator dependencies.
package k8stest
