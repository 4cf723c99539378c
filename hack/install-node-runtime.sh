#!/usr/bin/env bash
# Installs what Skylift's node mode (`skylift dev --node`, issue 17) needs to
# run one real Kubernetes node beside the local control plane:
#   packages  Debian's containerd, runc, containernetworking-plugins, buildah,
#             debootstrap (the operator image's base: hack/build-image.sh)
#             (apt; skipped when `dpkg -s` says they are installed)
#   kubelet   kubelet, kube-proxy and kube-scheduler built from the Go module proxy at
#             $KUBE_VERSION, as install-kube.sh builds kube-apiserver, into
#             $KUBELET_DIR (kube-proxy: Pods reach the apiserver through the
#             `kubernetes` Service; kube-scheduler: the plain stack
#             places no Pods)
#   images    the pod sandbox ("pause") image, the sample app ("hello"), the
#             Gateway API conformance suite's echo server ("echo-basic", from
#             the module hack/gatewayapi/ pins) and the CoreDNS its base
#             manifests run ("coredns", from the module hack/coredns/ pins),
#             static Go binaries packed by buildah into OCI archives in
#             $NODE_IMAGE_DIR (no registry is reachable here)
# With no argument, all three. Idempotent: each part is stamped and does
# nothing when its stamp matches. Prints the node runtime directory.
# Called by `make node-runtime` (part of `make setup`, so of `make test`).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KUBELET_DIR="$SKYLIFT_CACHE/kubelet/$KUBE_VERSION"
NODE_IMAGE_DIR="$SKYLIFT_CACHE/node-images"
# The names the images are imported under into containerd's k8s.io namespace.
# The pause name is what containerd's sandbox_image is set to (dev/node.ts;
# kubelet 1.36 no longer has --pod-infra-container-image).
PAUSE_IMAGE="localhost/skylift/pause:1"
HELLO_IMAGE="localhost/skylift/hello:1"
# The echo server's names in the Gateway API conformance suite's manifests (v1.6.3: base/ uses
# v1.5.1 and v1.6.0-dev.3, the TCPRoute and UDPRoute tests v1.6.0-dev.2); dev/nodeCluster.ts
# lists them too.
ECHO_BASIC_IMAGES=(
  registry.k8s.io/gateway-api/echo-basic:v1.5.1
  registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.2
  registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.3
)
# The CoreDNS of the suite's base manifests (gateway-conformance-infra/coredns): the name they give
# it; its version is hack/coredns/go.mod's (a unit test keeps the two equal).
COREDNS_IMAGE=registry.k8s.io/coredns/coredns:v1.12.2
# libcap2-bin: setcap, for the CoreDNS binary's file capability (build_coredns_image).
NODE_PACKAGES=(containerd runc containernetworking-plugins buildah iptables debootstrap libcap2-bin)

install_packages() {
  # Debian starts containerd as a system service on install; node mode runs its own.
  # (On machines without systemd the postinst does nothing.)
  apt_install "node mode" "${NODE_PACKAGES[@]}"
}

build_kubelet() {
  local stamp="$KUBELET_DIR/.stamp" want="kubelet,kube-proxy,kube-scheduler=$KUBE_VERSION"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "kubelet, kube-proxy and kube-scheduler $KUBE_VERSION already in $KUBELET_DIR"
    return 0
  fi
  mkdir -p "$SKYLIFT_CACHE"
  rm -rf "$SKYLIFT_CACHE"/kubelet-build.*   # left by an interrupted build; we hold the lock
  local tmp; tmp="$(mktemp -d "$SKYLIFT_CACHE/kubelet-build.XXXXXX")"
  export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOSUMDB="${GOSUMDB_OVERRIDE:-off}"
  local major minor date pkg ldflags=""
  major="${KUBE_VERSION#v}"; major="${major%%.*}"
  minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
  date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  local t0=$SECONDS t1 cmd
  for cmd in kubelet kube-proxy kube-scheduler; do
    log "building $cmd $KUBE_VERSION from the Go module proxy (minutes on a cold cache)"
    t1=$SECONDS
    go_build "go build k8s.io/kubernetes/cmd/$cmd" "$SKYLIFT_ROOT/hack/kubebins" \
      nice -n "${SKYLIFT_BUILD_NICE:-10}" go build -trimpath -ldflags "-s -w $ldflags" \
        -o "$tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd"
    log "$cmd built in $((SECONDS - t1)) s"
  done
  log "node binaries built in $((SECONDS - t0)) s"
  mkdir -p "$KUBELET_DIR"
  mv "$tmp/kubelet" "$tmp/kube-proxy" "$tmp/kube-scheduler" "$KUBELET_DIR/"
  rm -rf "$tmp"
  echo "$want" > "$stamp"
}

# build_go_image NAME SRC PKG ORIGIN HASH "REF..." CMD...: the static Go binary PKG, built in
# the module SRC, as the only file (/NAME) of an image with entrypoint CMD..., saved under every
# REF (one space-separated word each) as $NODE_IMAGE_DIR/NAME.oci.tar; ORIGIN is its
# org.opencontainers.image.source label. HASH names the sources; the stamp holds it with the
# refs and the Go version, and the build is skipped while it matches. With IMAGE_FILE_CAPS set
# (setcap's text form, e.g. cap_net_bind_service=+ep), the binary carries those file capabilities
# (an xattr in the layer), as upstream images made with setcap do; the stamp holds them too.
build_go_image() {
  local name="$1" src="$2" pkg="$3" origin="$4" hash="$5" refs="$6"; shift 6
  local out="$NODE_IMAGE_DIR/$name.oci.tar" stamp="$NODE_IMAGE_DIR/$name.stamp"
  local caps="${IMAGE_FILE_CAPS:-}"
  local want="$refs $hash $(go env GOVERSION)${caps:+ caps:$caps}"
  if [[ -f "$stamp" && -f "$out" && "$(cat "$stamp")" == "$want" ]]; then
    log "image $refs already in $out"
    return 0
  fi
  log "building image $refs from $pkg"
  local t0=$SECONDS tmp; tmp="$(mktemp -d "$SKYLIFT_CACHE/image-build.XXXXXX")"
  CGO_ENABLED=0 GOFLAGS=-mod=readonly go_build "go build $pkg" "$src" \
    nice -n "${SKYLIFT_BUILD_NICE:-10}" go build -trimpath -ldflags "-s -w" -o "$tmp/$name" "$pkg"
  if [[ -n "$caps" ]]; then
    setcap "$caps" "$tmp/$name"
    # buildah copy keeps the security.capability xattr; fail here rather than at the Pod's bind.
    [[ -n "$(getcap "$tmp/$name")" ]] || { log "setcap $caps left no capability on $name"; return 1; }
  fi
  # buildah keeps its own storage under the cache (vfs: no mounts needed, no
  # daemon); the image leaves it as an OCI archive that `ctr images import` reads.
  local bs=(--root "$SKYLIFT_CACHE/buildah/root" --runroot "$SKYLIFT_CACHE/buildah/run" --storage-driver vfs)
  local ref first="${refs%% *}" ctr; ctr="$(buildah "${bs[@]}" from scratch)"
  buildah "${bs[@]}" copy --quiet "$ctr" "$tmp/$name" "/$name" >/dev/null
  buildah "${bs[@]}" config --entrypoint "$(printf '["%s"' "$@"; printf ']')" --user 65532:65532 \
    --label org.opencontainers.image.source="$origin" "$ctr"
  buildah "${bs[@]}" commit --quiet --rm "$ctr" "$first" >/dev/null
  # One OCI layout holding the image under each name (one manifest, an index entry per
  # org.opencontainers.image.ref.name), packed as the archive: containerd imports every name.
  mkdir -p "$NODE_IMAGE_DIR" "$tmp/layout"
  for ref in $refs; do
    buildah "${bs[@]}" push --quiet "$first" "oci:$tmp/layout:$ref"
  done
  buildah "${bs[@]}" rmi "$first" >/dev/null
  rm -f "$out.tmp"
  tar -C "$tmp/layout" -cf "$out.tmp" oci-layout index.json blobs
  mv "$out.tmp" "$out"
  rm -rf "$tmp"
  echo "$want" > "$stamp"
  log "image $refs built in $((SECONDS - t0)) s ($(du -k "$out" | cut -f1) KiB)"
}

# build_image NAME REF CMD...: hack/nodeimages/NAME as the image REF (see build_go_image).
build_image() {
  local name="$1" ref="$2"; shift 2
  local src="$SKYLIFT_ROOT/hack/nodeimages"
  local hash; hash="$(cd "$src" && cat go.mod "$name"/*.go | sha256sum | cut -c1-16)"
  build_go_image "$name" "$src" "./$name" "skylift/hack/nodeimages/$name" "$hash" "$ref" "$@"
}

# The Gateway API conformance suite's echo server (echo-basic), from the conformance module
# that hack/gatewayapi/ pins, under every name the suite's embedded manifests give it: the
# registry they name is not reachable here, and the kubelet finds an imported image first
# (their Deployments leave imagePullPolicy at IfNotPresent). One build serves all three tags;
# the source is the module's v$GATEWAY_API_VERSION, newer than each tag (docs/development.md).
build_echo_image() {
  local src="$SKYLIFT_ROOT/hack/gatewayapi"
  local hash; hash="$(cd "$src" && cat go.mod go.sum | sha256sum | cut -c1-16)"
  local pkg=sigs.k8s.io/gateway-api/conformance/echo-basic
  build_go_image echo-basic "$src" "$pkg" "$pkg@$GATEWAY_API_VERSION" "$hash" "${ECHO_BASIC_IMAGES[*]}" /echo-basic
}

# CoreDNS as the conformance suite's base manifests run it (Deployment coredns in
# gateway-conformance-infra, image registry.k8s.io/coredns/coredns:v1.12.2, IfNotPresent), built
# from github.com/coredns/coredns at the version hack/coredns/go.mod pins, with only the plugins its
# Corefile uses (hack/coredns/main.go). Like upstream's image it runs as user 65532 with the file
# capability cap_net_bind_service=+ep: the manifest drops every capability but NET_BIND_SERVICE
# and sets allowPrivilegeEscalation: false, and a binary without the file capability loses that
# one at exec (a non-root user keeps no capability across exec otherwise) and cannot bind port 53.
build_coredns_image() {
  local src="$SKYLIFT_ROOT/hack/coredns"
  local hash; hash="$(cd "$src" && cat go.mod go.sum main.go | sha256sum | cut -c1-16)"
  local version
  version="$(awk '{ for (i = 1; i < NF; i++) if ($i == "github.com/coredns/coredns") print $(i + 1) }' "$src/go.mod")"
  IMAGE_FILE_CAPS=cap_net_bind_service=+ep build_go_image coredns "$src" skylift.dev/hack/coredns \
    "github.com/coredns/coredns@$version" "$hash" "$COREDNS_IMAGE" /coredns
}

build_images() {
  mkdir -p "$SKYLIFT_CACHE"
  rm -rf "$SKYLIFT_CACHE"/image-build.*
  build_image pause "$PAUSE_IMAGE" /pause
  build_image hello "$HELLO_IMAGE" /hello
  build_echo_image
  build_coredns_image
}

parts=("$@")
((${#parts[@]})) || parts=(packages kubelet images)
for part in "${parts[@]}"; do
  case "$part" in
    packages) with_lock node-packages install_packages ;;
    kubelet) with_lock kubelet build_kubelet ;;
    images) with_lock node-images build_images ;;
    *) log "unknown part: $part (packages, kubelet, images)"; exit 2 ;;
  esac
done
echo "$SKYLIFT_CACHE"
