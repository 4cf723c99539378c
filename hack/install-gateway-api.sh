#!/usr/bin/env bash
# Installs the Kubernetes Gateway API $GATEWAY_API_VERSION from the Go module
# proxy, through the wrapper module hack/gatewayapi/ (its go.mod pins
# sigs.k8s.io/gateway-api and sigs.k8s.io/gateway-api/conformance, its go.sum
# their checksums), into $GATEWAY_API_DIR:
#   crds          the standard channel as upstream ships it: every file of the
#                 module's config/crd/standard/ (the CRDs, and upstream's
#                 safe-upgrades ValidatingAdmissionPolicy), copied to crds/.
#                 make dev and the tests install the CRDs from there
#                 (dev/installCrds.ts), make generate copies them into the chart.
#   conformance   the conformance suite (sigs.k8s.io/gateway-api/conformance)
#                 compiled by `go test -c` of hack/gatewayapi/conformance_test.go
#                 into conformance.test, a binary that needs no Go toolchain:
#                 the suite's manifests are embedded in it.
# Idempotent: each part is stamped and does nothing when its stamp matches.
#   hack/install-gateway-api.sh [crds|conformance]...  install (default: both), print each part's path
#   hack/install-gateway-api.sh --print                print the paths of both, install nothing
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GATEWAY_API_DIR="$SKYLIFT_CACHE/gateway-api/$GATEWAY_API_VERSION"
src="$SKYLIFT_ROOT/hack/gatewayapi"
CRD_DIR="$GATEWAY_API_DIR/crds"
CONFORMANCE_BIN="$GATEWAY_API_DIR/conformance.test"

# Every go command here: the committed go.sum pins every module (the checksum
# database is not reachable from CI machines), nothing is added to go.mod.
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOSUMDB="${GOSUMDB_OVERRIDE:-off}"

install_crds() {
  local stamp="$CRD_DIR/.stamp" want="gateway-api=$GATEWAY_API_VERSION channel=standard"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "Gateway API $GATEWAY_API_VERSION CRDs (standard channel) already in $CRD_DIR"
    return 0
  fi
  mkdir -p "$GATEWAY_API_DIR"
  rm -rf "$GATEWAY_API_DIR"/crds-new.*   # left by an interrupted run; we hold the lock
  local tmp; tmp="$(mktemp -d "$GATEWAY_API_DIR/crds-new.XXXXXX")"
  chmod 755 "$tmp"
  log "fetching sigs.k8s.io/gateway-api $GATEWAY_API_VERSION from the Go module proxy"
  local t0=$SECONDS moddir
  # Into a file, not $(…): the progress ticker's sleep would hold a captured stdout open.
  if ! (cd "$src" && run_with_progress "go mod download sigs.k8s.io/gateway-api" \
    go mod download -json sigs.k8s.io/gateway-api) >"$tmp/.download.json"; then
    log "go mod download sigs.k8s.io/gateway-api failed: $(cat "$tmp/.download.json")"
    return 1
  fi
  # go prints one field per line: "Dir": "…", (and "Error": "…" when it failed).
  moddir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' "$tmp/.download.json")"
  if [[ -z "$moddir" || ! -d "$moddir/config/crd/standard" ]]; then
    log "go mod download named no module directory with config/crd/standard: $(cat "$tmp/.download.json")"
    return 1
  fi
  rm -f "$tmp/.download.json"
  log "  module in $moddir ($((SECONDS - t0)) s)"
  cp "$moddir"/config/crd/standard/*.yaml "$tmp/"
  chmod u+w "$tmp"/*.yaml   # the module cache is read-only
  # Each file must be the release the version names, on the standard channel: the conformance
  # suite refuses CRDs whose bundle-version annotation differs from its own.
  local f n=0
  for f in "$tmp"/*.yaml; do
    grep -q "gateway.networking.k8s.io/bundle-version: $GATEWAY_API_VERSION\$" "$f" &&
      grep -q 'gateway.networking.k8s.io/channel: standard$' "$f" || {
      log "$(basename "$f") is not annotated bundle-version $GATEWAY_API_VERSION, channel standard"
      return 1
    }
    grep -q '^kind: CustomResourceDefinition$' "$f" && n=$((n + 1))
  done
  rm -rf "$CRD_DIR"
  mv "$tmp" "$CRD_DIR"
  echo "$want" > "$stamp"
  log "Gateway API $GATEWAY_API_VERSION: $n CRDs of the standard channel in $CRD_DIR"
}

build_conformance() {
  local hash; hash="$(cd "$src" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)"
  local stamp="$GATEWAY_API_DIR/.conformance.stamp"
  local want="conformance=$GATEWAY_API_VERSION $(go env GOVERSION) $hash"
  if [[ -x "$CONFORMANCE_BIN" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "Gateway API $GATEWAY_API_VERSION conformance suite already in $CONFORMANCE_BIN"
    return 0
  fi
  mkdir -p "$GATEWAY_API_DIR"
  rm -f "$GATEWAY_API_DIR"/conformance.test.??????   # left by an interrupted build; we hold the lock
  local tmp; tmp="$(mktemp "$GATEWAY_API_DIR/conformance.test.XXXXXX")"
  log "building the Gateway API $GATEWAY_API_VERSION conformance suite (go test -c; a minute or two on a cold cache)"
  local t0=$SECONDS
  go_build "go test -c conformance" "$src" \
    nice -n "${SKYLIFT_BUILD_NICE:-10}" go test -c -trimpath -ldflags "-s -w" -o "$tmp" .
  # It must be a test binary holding the suite: -test.list runs no test and needs no cluster.
  if ! "$tmp" -test.list . | grep -qx TestConformance; then
    log "the built binary does not list TestConformance"
    rm -f "$tmp"
    return 1
  fi
  mv -f "$tmp" "$CONFORMANCE_BIN"
  echo "$want" > "$stamp"
  log "conformance suite built in $((SECONDS - t0)) s ($(du -m "$CONFORMANCE_BIN" | cut -f1) MiB): $CONFORMANCE_BIN"
}

if [[ "${1:-}" == "--print" ]]; then
  echo "$CRD_DIR"
  echo "$CONFORMANCE_BIN"
  exit 0
fi
parts=("$@")
((${#parts[@]})) || parts=(crds conformance)
for part in "${parts[@]}"; do
  case "$part" in
    crds) with_lock gateway-api-crds install_crds; echo "$CRD_DIR" ;;
    conformance) with_lock gateway-api-conformance build_conformance; echo "$CONFORMANCE_BIN" ;;
    *) log "unknown part: $part (crds, conformance)"; exit 2 ;;
  esac
done
