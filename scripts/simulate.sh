#!/usr/bin/env bash
# The sockets' randomized tests (a model of each face's contract under schedules drawn from seeds) over many more
# seeds than the test suite runs: batch after batch of fresh seeds until the time is up. A failing schedule prints
# its seed; replay it with TETHER_SIM_SEED=<seed> swift test --filter <suite>.
#   scripts/simulate.sh [--seconds N] [--operations N] [--face gcd|gcdtls|runloop|udp|udpsocket|async|all]
#                       [--batch N] [--offset N] [--long] [--release | --sanitize thread]
# --offset N: the first batch's seed offset (1000 unless told); a later run from past an earlier one's last offset
# draws seeds that run has not.
# --operations N: a face stops once its counted operations reach N (the run ends when every face has, or at --seconds).
# --long (TETHER_SIM_LONG=1, every face): each schedule runs thousands of operations on its socket or connection, the
# peers pause a tenth as long, and TETHER_SIM_CONCURRENCY (4) schedules run at once in one process; a batch is 8
# seeds unless --batch says otherwise. The totals give each face's operations per second.
# --release: the suites built optimized, with testability, in their own scratch path (.build-release; the debug
# build is left alone). The checks are the tests' own (#expect), which an optimized build keeps.
# Seeds run one test case at a time (--no-parallel): a batch of hundreds of cases started at once would each run
# past its suite's time limit.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=600
face=all
config=debug
batch=
target=
first_offset=1000
flags=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --face) face=$2; shift 2 ;;
        --batch) batch=$2; shift 2 ;;
        --operations) target=$2; shift 2 ;;
        --offset) first_offset=$2; shift 2 ;;
        --long) export TETHER_SIM_LONG=1; shift ;;
        --sanitize) [ "$2" = thread ] || { echo "--sanitize: only thread" >&2; exit 64; }
            flags=(--sanitize="$2" --scratch-path .build-tsan); config="sanitize=$2"
            # As scripts/sanitize.sh: its suppressions (the continuation handoff's known false positives).
            export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp:${TSAN_OPTIONS:-}"
            shift 2 ;;
        --release) flags=(-c release -Xswiftc -enable-testing --scratch-path .build-release); config=release
            shift ;;
        *) echo "usage: scripts/simulate.sh [--seconds N] [--operations N] [--face gcd|gcdtls|runloop|udp|udpsocket|async|all] [--batch N] [--offset N] [--long] [--release | --sanitize thread]" >&2
            exit 64 ;;
    esac
done

declare -A suites=(
    [gcd]=GCDAsyncSocketSimulationTests
    [gcdtls]=GCDAsyncSocketTLSSimulationTests
    [runloop]=AsyncSocketRandomizedTests
    [udp]=UDPSimulationTests
    [udpsocket]=UDPSocketSimulationTests
    [async]=TCPConnectionSimulationTests
)
if [ -z "$batch" ]; then batch=$([ -n "${TETHER_SIM_LONG:-}" ] && echo 8 || echo 200); fi
if [ "$face" = all ]; then faces=(gcd gcdtls runloop udp udpsocket async); else faces=("$face"); fi
for f in "${faces[@]}"; do
    [ -n "${suites[$f]:-}" ] || { echo "unknown face: $f" >&2; exit 64; }
done

swift build --build-tests "${flags[@]}" || exit 1
echo "simulating on $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Tests || echo '+changes'), $config build," \
    "${TETHER_SIM_LONG:+long mode, ${TETHER_SIM_CONCURRENCY:-4} schedules at once, }batches of $batch seeds, ${seconds} s,${target:+ until $target operations per face,}" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
deadline=$(($(date +%s) + seconds))
offset=$first_offset
status=0
declare -A schedules operations elapsed failing failed
log=$(mktemp)
reached() { [ -n "$target" ] && [ "${operations[$1]:-0}" -ge "$target" ]; }
while [ "$(date +%s)" -lt "$deadline" ]; do
    pending=0
    for f in "${faces[@]}"; do
        reached "$f" && continue
        [ "$(date +%s)" -lt "$deadline" ] || break
        pending=1
        suite=${suites[$f]}
        started=$(date +%s)
        TETHER_SIM_SEEDS=$batch TETHER_SIM_OFFSET=$offset swift test --skip-build --no-parallel "${flags[@]}" \
            --filter "TetherSocketsTests.$suite" >"$log" 2>&1
        code=$?
        elapsed[$f]=$((${elapsed[$f]:-0} + $(date +%s) - started))
        if ! grep -q "Test run with" "$log"; then
            echo "$f: the suite did not run (no such test yet?)"; continue
        fi
        # Each suite prints a summary line per test case (schedules, operations, failing); a suite without one counts
        # one schedule per seed.
        ran=$(grep -Eo 'simulation [^:]*: [0-9]+ schedules, [0-9]+ operations, [0-9]+ failing' "$log" |
            awk '{ s += $(NF-5); o += $(NF-3); v += $(NF-1) } END { print s+0, o+0, v+0 }')
        read -r s o v <<<"$ran"
        if [ "$s" -eq 0 ]; then s=$batch; fi
        schedules[$f]=$((${schedules[$f]:-0} + s))
        operations[$f]=$((${operations[$f]:-0} + o))
        failing[$f]=$((${failing[$f]:-0} + v))
        if [ "$code" -ne 0 ]; then
            status=1
            failed[$f]=1
            # The whole log is kept: a hang's report (the engine's and the peer's state) runs past the lines below.
            kept="${TMPDIR:-/tmp}/simulate-$f-$offset.log"
            cp "$log" "$kept"
            echo "$f: FAILED in the batch of seeds from offset $offset (log: $kept):"
            grep -E 'TETHER_SIM_SEED=|seed [0-9]+|✘' "$log" | cut -c1-600 | head -20
            # A sanitizer's report fails the process without failing a schedule: show it.
            grep -A30 -E '^WARNING: ThreadSanitizer|^SUMMARY: ThreadSanitizer' "$log" | cut -c1-300 | head -60
        fi
    done
    offset=$((offset + batch))
    # Every face has reached --operations: nothing ran in this pass.
    [ "$pending" -eq 1 ] || break
    echo "after offset $offset ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg)):$(for f in "${faces[@]}"; do printf ' %s %s' "$f" "${operations[$f]:-0}"; done)"
done
rm -f "$log"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for f in "${faces[@]}"; do
    seconds_run=${elapsed[$f]:-0}
    rate=$([ "$seconds_run" -gt 0 ] && echo $((${operations[$f]:-0} / seconds_run)) || echo 0)
    verdict=$([ -z "${failed[$f]:-}" ] && echo 'no violation' || echo "FAILED (${failing[$f]:-0} schedules failing)")
    echo "$f: ${schedules[$f]:-0} schedules, ${operations[$f]:-0} operations counted in ${seconds_run} s ($rate a second), $verdict"
done
exit $status
