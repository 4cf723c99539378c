#!/usr/bin/env bash
# Installs promtool (Prometheus' rule checker) from Debian's `prometheus`
# package into $PROMTOOL_DIR without installing the package: `apt-get download`
# fetches the .deb, `dpkg-deb -x` unpacks it, only promtool is kept.
# Idempotent: does nothing when the stamped binary is already there.
# --print: print the binary's path without installing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PROMTOOL_DIR="$SKYLIFT_CACHE/promtool/$PROMETHEUS_DEB_VERSION"
bin="$PROMTOOL_DIR/promtool"
stamp="$PROMTOOL_DIR/.stamp"

if [[ "${1:-}" == "--print" ]]; then
  echo "$bin"
  exit 0
fi

download() {
  # As root, apt hands downloads to its _apt sandbox user, which cannot write
  # into our private directory; the download itself needs no privileges.
  local opts=()
  [[ "$(id -u)" == 0 ]] && opts=(-o APT::Sandbox::User=root)
  apt-get "${opts[@]}" -qq download "prometheus=$PROMETHEUS_DEB_VERSION"
}

install_promtool() {
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$PROMETHEUS_DEB_VERSION" && -x "$bin" ]]; then
    log "promtool $PROMETHEUS_DEB_VERSION already in $PROMTOOL_DIR"
    return 0
  fi
  local tool
  for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null || { log "promtool is installed with $tool (Debian or Ubuntu): not found"; exit 1; }
  done
  mkdir -p "$SKYLIFT_CACHE"
  rm -rf "$SKYLIFT_CACHE"/promtool-build.*   # left by an interrupted install; we hold the lock
  local tmp; tmp="$(mktemp -d "$SKYLIFT_CACHE/promtool-build.XXXXXX")"
  log "downloading Debian's prometheus $PROMETHEUS_DEB_VERSION for promtool"
  if ! (cd "$tmp" && download); then
    # A fresh machine may have no package lists yet; refreshing them changes no installed package.
    [[ "$(id -u)" == 0 ]] || { log "apt-get download failed; run 'apt-get update' as root and retry"; exit 1; }
    log "apt-get download failed; refreshing the package lists and retrying"
    apt-get -qq update
    (cd "$tmp" && download)
  fi
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root"
  "$tmp/root/usr/bin/promtool" --version >/dev/null
  mkdir -p "$PROMTOOL_DIR"
  mv "$tmp/root/usr/bin/promtool" "$bin"
  rm -rf "$tmp"
  echo "$PROMETHEUS_DEB_VERSION" > "$stamp"
}

with_lock promtool install_promtool
echo "$bin"
