//go:build tools

// Package kubebins pins the upstream Kubernetes control-plane binaries that
// Skylift's tests run against. Nothing here is compiled into Skylift; the
// imports only make `go build k8s.io/kubernetes/cmd/...` resolve against the
// versions pinned in go.mod.
package kubebins

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
