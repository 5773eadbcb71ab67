#!/usr/bin/env bash
# Builds every library module's DocC documentation with warnings as errors: a broken symbol link, an unknown
# article reference or a malformed topic group fails the build. Archives land in .build/plugins/Swift-DocC/outputs.
# Extra arguments go to `generate-documentation` (e.g. `--target TetherCore` alone is not supported: use
# TETHER_DOC_TARGETS="TetherCore TetherStore" scripts/docs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(${TETHER_DOC_TARGETS:-TetherCore TetherSockets TetherHTTP TetherReachability TetherStore TetherNotes TetherPostgres})
args=()
for target in "${targets[@]}"; do args+=(--target "$target"); done

status=0
swift package --disable-sandbox generate-documentation "${args[@]}" --warnings-as-errors "$@" || status=$?
if [ "$status" -eq 0 ]; then echo "docs: ${#targets[@]} modules built without warnings"; fi
exit $status
