//go:build tools

// Package etcd pins the etcd server that Skylift's tests run kube-apiserver on.
package etcd

import (
	_ "go.etcd.io/etcd/server/v3"
)
