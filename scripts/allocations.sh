#!/usr/bin/env bash
# The allocation table of BENCHMARKS.md ("Allocation budgets"): every case of the allocation harness
# (Tests/Tools/TetherAllocations), Tether's face beside the engine, allocations per operation.
#   scripts/allocations.sh                 # the debug build that CI's budgets are kept for
#   scripts/allocations.sh --release       # a release build (its own, longer build of every dependency; not in CI)
#   scripts/allocations.sh --only http     # extra arguments go to the harness: --only TEXT, --rounds N, --json FILE
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=debug
if [ "${1:-}" = "--release" ]; then
    configuration=release
    shift
fi
swift build -c "$configuration" --product TetherAllocations
"$(swift build -c "$configuration" --show-bin-path)/TetherAllocations" "$@"
