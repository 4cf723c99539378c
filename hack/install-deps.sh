#!/usr/bin/env bash
# npm ci in the clone, with progress every 10 s (a cold npm cache takes a minute or more).
# Run by make when package.json or package-lock.json is newer than node_modules.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$SKYLIFT_ROOT"
log "installing npm packages (npm ci)"
t0=$SECONDS
run_with_progress "npm ci" npm ci --no-audit --no-fund --loglevel=error
log "npm packages installed in $((SECONDS - t0)) s"
touch node_modules/.package-lock.json
