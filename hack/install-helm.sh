#!/usr/bin/env bash
# Builds the Helm CLI from the Go module proxy into $HELM_BIN_DIR, for the
# tests that render the chart. Idempotent: does nothing when the stamped
# binary is already there.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_BIN_DIR="$SKYLIFT_CACHE/helm/$HELM_VERSION"
stamp="$HELM_BIN_DIR/.stamp"

build() {
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$HELM_VERSION" ]]; then
    log "helm $HELM_VERSION already in $HELM_BIN_DIR"
    return 0
  fi
  mkdir -p "$SKYLIFT_CACHE"
  rm -rf "$SKYLIFT_CACHE"/helm-build.*   # left by an interrupted build; we hold the lock
  local tmp; tmp="$(mktemp -d "$SKYLIFT_CACHE/helm-build.XXXXXX")"
  export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOSUMDB="${GOSUMDB_OVERRIDE:-off}"
  log "building helm $HELM_VERSION (a few minutes on a cold cache)"
  local t0=$SECONDS
  go_build "go build helm" "$SKYLIFT_ROOT/hack/helm" go build -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    -o "$tmp/helm" helm.sh/helm/v4/cmd/helm
  log "helm built in $((SECONDS - t0)) s"
  mkdir -p "$HELM_BIN_DIR"
  mv "$tmp/helm" "$HELM_BIN_DIR/helm"
  rm -rf "$tmp"
  echo "$HELM_VERSION" > "$stamp"
}

with_lock helm build
echo "$HELM_BIN_DIR/helm"
