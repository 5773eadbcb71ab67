#!/usr/bin/env bash
# The Examples package (Examples/): builds every example program and the tests, then runs the tests, which start
# each built example as a child process against loopback. Extra arguments go to `swift test` (e.g. --filter
# EchoTests). Exits non-zero when the build or any test fails.
set -uo pipefail
cd "$(dirname "$0")/../Examples"

started=$SECONDS
if ! swift build --build-tests; then
    echo "error: the examples did not build"
    exit 1
fi
echo "examples built in $((SECONDS - started)) s"

started=$SECONDS
# In a session of its own: if the test process dies or hangs (it is stopped after the timeout; each test also has
# its own time limit), the examples it started are killed with whatever else is left of the session.
setsid timeout -k 30 "${TETHER_EXAMPLES_TEST_TIMEOUT:-900}" swift test --skip-build "$@" &
session=$!
wait "$session"
status=$?
pkill -KILL -s "$session" 2>/dev/null || true
echo "example tests ran in $((SECONDS - started)) s (exit status $status)"
exit "$status"
