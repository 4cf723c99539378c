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

# Seconds between two progress lines of a long step: a step that starts right after a log line
# is never silent for more than this and the moment it took to start (promised: 15 s).
PROGRESS_EVERY="${SKYLIFT_PROGRESS_EVERY:-10}"

# progress LABEL PID: prints every $PROGRESS_EVERY s how long LABEL (running as PID) has taken.
progress() {
  local label="$1" pid="$2" t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    sleep "$PROGRESS_EVERY"
    kill -0 "$pid" 2>/dev/null && log "  … $label: $((SECONDS - t0)) s so far"
  done
}

# run_with_progress LABEL CMD...: runs CMD, printing progress while it runs.
run_with_progress() {
  local label="$1"; shift
  "$@" &
  local pid=$!
  progress "$label" "$pid" &
  local ticker=$!
  local rc=0
  wait "$pid" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$rc"
}

# go_build LABEL DIR CMD...: a Go build command (`go build …`, maybe under nice or another go) in
# DIR, with progress every $PROGRESS_EVERY s
# that counts the modules fetched so far instead of streaming one `go: downloading` line per
# module (a cold Kubernetes build prints ~290); whatever else go prints is shown once it ends.
go_build() {
  local label="$1" dir="$2"; shift 2
  local out; out="$(mktemp "${TMPDIR:-/tmp}/skylift-go-build.XXXXXX")"
  (cd "$dir" && "$@") 2>"$out" &
  local pid=$! t0=$SECONDS rc=0
  (
    while kill -0 "$pid" 2>/dev/null; do
      sleep "$PROGRESS_EVERY"
      kill -0 "$pid" 2>/dev/null &&
        log "  … $label: $((SECONDS - t0)) s so far, $(grep -c '^go: downloading ' "$out" || true) modules downloaded"
    done
  ) &
  local ticker=$!
  wait "$pid" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  local downloaded; downloaded="$(grep -c '^go: downloading ' "$out" || true)"
  ((downloaded == 0)) || log "  $label: $downloaded modules downloaded from the Go module proxy"
  grep -v '^go: downloading ' "$out" >&2 || true
  rm -f "$out"
  return "$rc"
}

# apt_install WHY PACKAGE...: installs with apt those of PACKAGE... that `dpkg -s` lacks (root
# only; otherwise says what to run and fails). WHY names what needs them, for the messages.
apt_install() {
  local why="$1"; shift
  local missing=() p
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "$why: Debian packages already installed: $*"
    return 0
  fi
  if [[ $EUID -ne 0 ]]; then
    log "$why needs these Debian packages: ${missing[*]} (run as root: apt-get install ${missing[*]})"
    return 1
  fi
  log "installing ${missing[*]} with apt"
  local t0=$SECONDS
  # The package lists may never have been fetched on a fresh machine.
  if ! apt-cache show "${missing[0]}" >/dev/null 2>&1; then
    run_with_progress "apt-get update" apt-get update -qq
  fi
  # --no-install-recommends: nothing recommended is needed (buildah would pull in podman's stack).
  run_with_progress "apt-get install" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  log "${missing[*]} installed in $((SECONDS - t0)) s"
}
