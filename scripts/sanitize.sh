#!/usr/bin/env bash
# Tests under a sanitizer, in a build of their own (.build-tsan or .build-asan, so that the normal build stays as it
# is). Any report from the sanitizer fails the run.
#   scripts/sanitize.sh                          # thread sanitizer, the sockets tests
#   scripts/sanitize.sh thread '<filter>'        # thread sanitizer, another test filter (a regular expression)
#   scripts/sanitize.sh address                  # address sanitizer (and LeakSanitizer), every test target
#   scripts/sanitize.sh address '<filter>'
# On a 2-core machine a first build takes about 20 minutes; RELIABILITY.md has the test times.
# TETHER_TEST_TARGETS="TetherSocketsTests TetherHTTPTests" builds only those test targets and what they use, not the
# `tether` command (Package.swift); the tests then run the `tether` of the normal build (.build/debug, or
# TETHER_PRODUCTS_DIR), which must exist.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -n "${TETHER_TEST_TARGETS:-}" ]; then
    export TETHER_PRODUCTS_DIR="${TETHER_PRODUCTS_DIR:-$PWD/.build/debug}"
    if [ ! -x "$TETHER_PRODUCTS_DIR/tether" ]; then
        echo "error: TETHER_TEST_TARGETS leaves \`tether\` out of this build; build it first (swift build)" >&2
        exit 1
    fi
fi

kind=${1:-thread}
case "$kind" in
    thread)
        scratch=.build-tsan
        filter=${2:-'^TetherSocketsTests\.'}
        report="ThreadSanitizer"
        export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp:${TSAN_OPTIONS:-}"
        ;;
    address)
        scratch=.build-asan
        filter=${2:-'^Tether'}
        report="AddressSanitizer|LeakSanitizer"
        export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:${ASAN_OPTIONS:-}"
        export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
        ;;
    *)
        echo "usage: scripts/sanitize.sh [thread|address] [test filter]" >&2
        exit 64
        ;;
esac

started=$(date +%s)
swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" || exit 1
built=$(date +%s)
log=$(mktemp)
# One test at a time: a sanitizer slows code 2-15 times, and parallel tests on two cores then miss their own
# deadlines (handshake limits, read timeouts) for want of CPU, not for a bug.
setsid timeout -k 30 3600 swift test --skip-build --no-parallel --sanitize="$kind" --scratch-path "$scratch" \
    --filter "$filter" >"$log" 2>&1
code=$?
finished=$(date +%s)
tail -n 5 "$log"
# The failing tests by name (swift-testing's issues, XCTest's failures), so that a run's output says what failed.
grep -E "✘ Test .*(recorded an issue|failed after)|: error: .* failed|Test Case .* failed" "$log" | head -n 40
if grep -Eq "$report" "$log"; then
    # The test that was running, then each report whole (both accesses' stacks, the location, the threads) with
    # the build paths and build ids cut, so that the report's two sides fit in the output that CI keeps.
    first=$(grep -E -n -m 1 "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer" "$log" | cut -d: -f1)
    head -n "$first" "$log" | grep -E "Test Case '.*' started|◇ Test .* started|◇ Suite .* started" | tail -n 2
    awk '/WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer/ { on = 1 } on { print } /^SUMMARY: / { on = 0 }' "$log" |
        sed -E 's/ \(BuildId: [0-9a-f]+\)//; s# /[^ ]*/(Sources|Tests|checkouts)/# \1/#; s/ \([A-Za-z]+\.xctest\+0x[0-9a-f]+\)//' |
        cut -c1-220 | head -n 300
    echo "error: the $kind sanitizer reported a problem (full log: $log)"
    code=1
fi
echo "build $((built - started)) s, tests $((finished - built)) s"
exit "$code"
