#!/usr/bin/env bash
# Creates the moto server venv under the cache dir from the pinned
# requirements. Idempotent: a venv built from the same requirements file is
# reused. Prints the venv directory.
source "$(dirname "${BASH_SOURCE[0]}")/../hack/lib.sh"

req="$SKYLIFT_ROOT/localstack/requirements.txt"
sum="$(sha256sum "$req" | cut -c1-16)"
stamp="$VENV_DIR/.skylift-requirements"

make_venv() {
  python3 -m venv "$VENV_DIR"
  "$VENV_DIR/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
}

install() {
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" && -x "$VENV_DIR/bin/moto_server" ]]; then
    return 0
  fi
  log "creating moto $MOTO_VERSION venv in $VENV_DIR"
  local t0=$SECONDS
  rm -rf "$VENV_DIR"
  run_with_progress "moto venv" make_venv
  log "moto venv ready in $((SECONDS - t0)) s"
  echo "$sum" > "$stamp"
}
with_lock moto install
echo "$VENV_DIR"
