#!/usr/bin/env bash
# Builds upstream kube-apiserver, kube-controller-manager and etcd from the Go
# module proxy (as envtest's binaries are built) into $KUBE_BIN_DIR.
# Idempotent: does nothing when the stamped binaries are already there.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stamp="$KUBE_BIN_DIR/.stamp"
want="kube=$KUBE_VERSION etcd=$ETCD_VERSION"

build() {
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "kube binaries $want already in $KUBE_BIN_DIR"
    return 0
  fi
  mkdir -p "$SKYLIFT_CACHE"
  rm -rf "$SKYLIFT_CACHE"/kube-build.*   # left by an interrupted build; we hold the lock
  local tmp; tmp="$(mktemp -d "$SKYLIFT_CACHE/kube-build.XXXXXX")"
  export CGO_ENABLED=0 GOFLAGS=-mod=readonly
  # The committed go.sum pins every module; the checksum database is often
  # unreachable from CI machines, and adds nothing once go.sum is complete.
  export GOSUMDB="${GOSUMDB_OVERRIDE:-off}"
  local major minor date
  major="${KUBE_VERSION#v}"; major="${major%%.*}"
  minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
  date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  local pkg ldflags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  log "building kube-apiserver and kube-controller-manager $KUBE_VERSION (several minutes on a cold cache)"
  local t0=$SECONDS
  go_build "go build kube-apiserver kube-controller-manager" "$SKYLIFT_ROOT/hack/kubebins" \
    go build -trimpath -ldflags "-s -w $ldflags" \
    -o "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
  log "building etcd $ETCD_VERSION"
  go_build "go build etcd" "$SKYLIFT_ROOT/hack/etcd" go build -trimpath \
    -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ETCD_VERSION" \
    -o "$tmp/etcd" go.etcd.io/etcd/server/v3
  log "kube binaries built in $((SECONDS - t0)) s"
  mkdir -p "$KUBE_BIN_DIR"
  mv "$tmp"/kube-apiserver "$tmp"/kube-controller-manager "$tmp"/etcd "$KUBE_BIN_DIR/"
  rm -rf "$tmp"
  echo "$want" > "$stamp"
}

with_lock kube build
echo "$KUBE_BIN_DIR"
