#!/usr/bin/env bash
# Runs the pinned moto server in the foreground on 127.0.0.1:${1:-5000}.
# The test harness and `make dev` start moto themselves (dev/emulator.ts);
# this script is for poking at the emulator by hand.
set -euo pipefail
venv="$("$(dirname "${BASH_SOURCE[0]}")/install-moto.sh")"
exec "$venv/bin/moto_server" -H 127.0.0.1 -p "${1:-5000}"
