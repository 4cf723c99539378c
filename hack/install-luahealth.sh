#!/usr/bin/env bash
# Builds hack/luahealth (Argo CD's Lua interpreter, gopher-lua, pinned in its
# go.mod) into the cache, for the tests that run the Argo CD health checks.
# Idempotent: does nothing when the stamped binary is already there. The stamp
# is a hash of the runner's sources, so editing them rebuilds it.
# Prints the binary's path.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

src="$SKYLIFT_ROOT/hack/luahealth"
LUAHEALTH_DIR="$SKYLIFT_CACHE/luahealth"
stamp="$LUAHEALTH_DIR/.stamp"
want="$(cd "$src" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)"

build() {
  if [[ -x "$LUAHEALTH_DIR/luahealth" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  mkdir -p "$LUAHEALTH_DIR"
  rm -f "$LUAHEALTH_DIR"/luahealth.??????   # left by an interrupted build; we hold the lock
  export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOSUMDB="${GOSUMDB_OVERRIDE:-off}"
  log "building luahealth (gopher-lua, as Argo CD runs health checks)"
  local tmp; tmp="$(mktemp "$LUAHEALTH_DIR/luahealth.XXXXXX")"
  go_build "go build luahealth" "$src" go build -trimpath -ldflags "-s -w" -o "$tmp" .
  mv -f "$tmp" "$LUAHEALTH_DIR/luahealth"
  echo "$want" > "$stamp"
}

with_lock luahealth build
echo "$LUAHEALTH_DIR/luahealth"
