#!/usr/bin/env bash
# The benchmarks' summary set, in one command: builds Benchmarks/ in release, runs each area's benchmark, and writes
# into BENCHMARKS.md the summary table and each area's full tables (between their markers), with the commit, the
# date and the machine's load. Nothing in those parts of BENCHMARKS.md is written by hand.
#
#   scripts/benchmarks.sh                 # every area (about 25 minutes on a 2-core machine)
#   scripts/benchmarks.sh sockets http    # some areas: sockets tls http stores memory notes
#
# Run it on an idle machine: the figures are ratios of Tether to the engine under it measured side by side, but a
# build or a test run beside them moves both sides unevenly. The raw output of each area stays in
# Benchmarks/.build/summary/<area>.txt. Exits non-zero when a benchmark fails; BENCHMARKS.md is then left as it was.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A commands=(
    [sockets]="TetherBenchmarks --only side-by-side-all --rounds 5 --bulk-mib 1024"
    [tls]="TetherBenchmarks --only tls-handshakes --rounds 7"
    [http]="TetherBenchmarks --only http --rounds 7"
    [stores]="TetherBenchmarks --only store --rounds 3"
    [memory]="TetherBenchmarks --only memory"
    [notes]="tether-notes-bench --no-fsync --rounds 5 --duration 3"
)
areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then areas=(sockets tls http stores memory notes); fi
for area in "${areas[@]}"; do
    if [ -z "${commands[$area]:-}" ]; then
        echo "usage: scripts/benchmarks.sh [sockets|tls|http|stores|memory|notes ...]" >&2
        exit 64
    fi
done

(cd Benchmarks && swift build -c release --product TetherBenchmarks && swift build -c release --product tether-notes-bench)
bin=$(cd Benchmarks && swift build -c release --show-bin-path)
logs=Benchmarks/.build/summary
mkdir -p "$logs"

commit=$(git rev-parse --short HEAD)
if ! git diff --quiet HEAD -- Sources Benchmarks Package.swift; then commit="$commit with local changes"; fi
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "benchmarks: commit $commit, load average $load before the runs"

for area in "${areas[@]}"; do
    read -r -a command <<<"${commands[$area]}"
    echo "== $area: ${commands[$area]}"
    printf '%s\n%s\n%s\n%s\n' "${commands[$area]}" "$commit" "$(date -u +%Y-%m-%d)" "$load" >"$logs/$area.run"
    started=$SECONDS
    (cd Benchmarks && "$bin/${command[0]}" "${command[@]:1}") | tee "$logs/$area.txt"
    echo "== $area: $((SECONDS - started)) s"
done

# The summary is made from every area's latest run in $logs (each row says its run's date and commit).
python3 scripts/benchmarks-summary.py BENCHMARKS.md "$logs" "$(nproc)"
echo "benchmarks: BENCHMARKS.md written"
