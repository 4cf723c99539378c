#!/usr/bin/env bash
# Installs what the Argo CD end-to-end test (test/e2e/argocd.test.ts) runs:
#   redis     Debian's Redis 7 (package redis-tools: its redis-check-rdb is
#             the redis-server binary, chosen by argv[0]; the redis-server
#             package would only add a system service listening on :6379,
#             which nothing here wants), linked as $ARGOCD_DIR/redis-server
#   argocd    Argo CD's application controller and repo server, built from
#             the Go module proxy through the wrapper module hack/argocd/
#             (one multi-call binary, run as argocd-application-controller
#             and argocd-repo-server), into $ARGOCD_DIR
#   crds      Argo CD's Application and AppProject CRDs, copied from the
#             argo-cd module the binary was built from (manifests/crds/)
#   bin       the helper scripts Argo CD's image puts on the PATH
#             (hack/git-verify-wrapper.sh, which the repo server runs for
#             every manifest generation, and hack/gpg-wrapper.sh), from the
#             same module
# Argo CD $ARGOCD_VERSION needs Go 1.27: the go command fetches that toolchain
# ($ARGOCD_GO_TOOLCHAIN) from the Go module proxy once, like a module.
# Idempotent: each part is stamped and does nothing when its stamp matches.
# Prints $ARGOCD_DIR.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ARGOCD_DIR="$SKYLIFT_CACHE/argocd/$ARGOCD_VERSION"
REDIS_PACKAGE=redis-tools

install_redis() {
  apt_install "the Argo CD test" "$REDIS_PACKAGE"
  mkdir -p "$ARGOCD_DIR"
  ln -sfn /usr/bin/redis-check-rdb "$ARGOCD_DIR/redis-server"
}

# go127: the go command of $ARGOCD_GO_TOOLCHAIN, fetched from the module proxy
# on first use. The download is checked against the checksum database (the
# go command insists on that for toolchains); the build itself then runs with
# GOSUMDB=off against the committed go.sum, like the other wrapper modules.
go127() {
  local goroot
  goroot="$(GOTOOLCHAIN="$ARGOCD_GO_TOOLCHAIN" GOSUMDB=sum.golang.org go env GOROOT)"
  echo "$goroot/bin/go"
}

build_argocd() {
  local src="$SKYLIFT_ROOT/hack/argocd"
  local hash; hash="$(cd "$src" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)"
  local stamp="$ARGOCD_DIR/.stamp" want="argocd=$ARGOCD_VERSION $ARGOCD_GO_TOOLCHAIN $hash"
  if [[ -x "$ARGOCD_DIR/argocd" && -f "$ARGOCD_DIR/crds/application-crd.yaml" &&
        -x "$ARGOCD_DIR/bin/git-verify-wrapper.sh" && -f "$stamp" &&
        "$(cat "$stamp")" == "$want" ]]; then
    log "argocd $ARGOCD_VERSION already in $ARGOCD_DIR"
    return 0
  fi
  mkdir -p "$SKYLIFT_CACHE"
  rm -rf "$SKYLIFT_CACHE"/argocd-build.*   # left by an interrupted build; we hold the lock
  local tmp; tmp="$(mktemp -d "$SKYLIFT_CACHE/argocd-build.XXXXXX")"
  local go; go="$(go127)"
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly GOSUMDB="${GOSUMDB_OVERRIDE:-off}"
  local pkg=github.com/argoproj/argo-cd/v3/common
  local ldflags="-s -w -X $pkg.version=${ARGOCD_VERSION#v} -X $pkg.gitTag=$ARGOCD_VERSION"
  ldflags+=" -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ) -X $pkg.gitTreeState=clean"
  log "building argocd-application-controller and argocd-repo-server $ARGOCD_VERSION from the Go module proxy ($("$go" env GOVERSION); minutes on a cold cache)"
  local t0=$SECONDS
  go_build "go build argocd" "$src" \
    nice -n "${SKYLIFT_BUILD_NICE:-10}" "$go" build -trimpath -ldflags "$ldflags" -o "$tmp/argocd" .
  log "argocd built in $((SECONDS - t0)) s ($(du -m "$tmp/argocd" | cut -f1) MiB)"
  # The CRDs and scripts of the very module the binary was built from.
  local moddir; moddir="$(cd "$src" && "$go" list -m -f '{{.Dir}}' github.com/argoproj/argo-cd/v3)"
  mkdir -p "$tmp/crds" "$tmp/bin"
  cp "$moddir/manifests/crds/application-crd.yaml" "$moddir/manifests/crds/appproject-crd.yaml" "$tmp/crds/"
  cp "$moddir/hack/git-verify-wrapper.sh" "$moddir/hack/gpg-wrapper.sh" "$tmp/bin/"
  chmod u+w "$tmp/crds"/* "$tmp/bin"/*
  chmod +x "$tmp/bin"/*
  mkdir -p "$ARGOCD_DIR"
  rm -rf "$ARGOCD_DIR/crds" "$ARGOCD_DIR/bin"
  mv "$tmp/crds" "$ARGOCD_DIR/crds"
  mv "$tmp/bin" "$ARGOCD_DIR/bin"
  mv -f "$tmp/argocd" "$ARGOCD_DIR/argocd"
  # The names the multi-call binary answers to.
  ln -sfn argocd "$ARGOCD_DIR/argocd-application-controller"
  ln -sfn argocd "$ARGOCD_DIR/argocd-repo-server"
  rm -rf "$tmp"
  echo "$want" > "$stamp"
}

parts=("$@")
((${#parts[@]})) || parts=(redis argocd)
for part in "${parts[@]}"; do
  case "$part" in
    redis) with_lock argocd-redis install_redis ;;
    argocd) with_lock argocd build_argocd ;;
    *) log "unknown part: $part (redis, argocd)"; exit 2 ;;
  esac
done
echo "$ARGOCD_DIR"
