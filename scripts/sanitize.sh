#!/usr/bin/env bash
# The sockets tests under the thread sanitizer: a build of its own (in .build-tsan, so that the normal build stays
# as it is), then the TetherSocketsTests target. Any report from the sanitizer fails the run.
#   scripts/sanitize.sh                 # thread sanitizer, sockets tests
#   scripts/sanitize.sh '<filter>'      # another test filter (a regular expression over test names)
# On a 2-core machine the first build takes about 20 minutes, the test run a few minutes more; see README.md.
set -uo pipefail
cd "$(dirname "$0")/.."

filter=${1:-'^TetherSocketsTests\.'}
scratch=.build-tsan
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:${TSAN_OPTIONS:-}"

started=$(date +%s)
swift build --build-tests --sanitize=thread --scratch-path "$scratch" || exit 1
built=$(date +%s)
log=$(mktemp)
# One test at a time: the sanitizer slows code 5-15 times, and parallel tests on two cores then miss their own
# deadlines (handshake limits, read timeouts) for want of CPU, not for a bug.
setsid timeout -k 30 3600 swift test --skip-build --no-parallel --sanitize=thread --scratch-path "$scratch" \
    --filter "$filter" >"$log" 2>&1
code=$?
finished=$(date +%s)
tail -n 5 "$log"
if grep -q "ThreadSanitizer" "$log"; then
    grep -n -A 30 "WARNING: ThreadSanitizer" "$log" | head -n 200
    echo "error: the thread sanitizer reported a problem (full log: $log)"
    code=1
fi
echo "build $((built - started)) s, tests $((finished - built)) s"
exit "$code"
