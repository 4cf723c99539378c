#!/usr/bin/env bash
# Shared settings for Skylift's install scripts. Sourced, not executed.
# Everything installed lives outside the clone, so a fresh clone on the same
# machine reuses it.
set -euo pipefail

SKYLIFT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SKYLIFT_CACHE="${SKYLIFT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skylift}"

# Pinned versions live in one file, shared with the TypeScript launcher.
# shellcheck source=versions.env
source "$SKYLIFT_ROOT/hack/versions.env"

KUBE_BIN_DIR="${SKYLIFT_KUBE_BIN_DIR:-$SKYLIFT_CACHE/kube/$KUBE_VERSION}"
NODE_DIR="$SKYLIFT_CACHE/node/$NODE_VERSION"
VENV_DIR="${SKYLIFT_VENV_DIR:-$SKYLIFT_CACHE/venv/moto-$MOTO_VERSION}"

log() { printf '[skylift] %s\n' "$*" >&2; }

# with_lock NAME CMD...: serialise concurrent installers (two clones, CI + dev).
with_lock() {
  local name="$1"; shift
  mkdir -p "$SKYLIFT_CACHE/locks"
  exec {lockfd}>"$SKYLIFT_CACHE/locks/$name.lock"
  flock "$lockfd"
  "$@"
  exec {lockfd}>&-
}
