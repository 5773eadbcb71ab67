#!/usr/bin/env bash
# The Examples package (Examples/): builds every example program and the tests, then runs the tests, which start
# each built example as a child process against loopback. Extra arguments go to `swift test` (e.g. --filter
# EchoTests). Exits non-zero when the build or any test fails.
#
# TETHER_EXAMPLES_SCRATCH=DIR builds in DIR instead of Examples/.build: CI gives it the root package's .build, so the
# dependencies and Tether's own modules, built there with the same flags, are not built a second time. The examples
# resolve to the root package's versions (its Package.resolved is copied first), so the shared checkouts stay put.
set -uo pipefail
cd "$(dirname "$0")/../Examples"

scratch=()
if [ -n "${TETHER_EXAMPLES_SCRATCH:-}" ]; then
    scratch=(--scratch-path "$TETHER_EXAMPLES_SCRATCH")
    if [ -f ../Package.resolved ]; then cp ../Package.resolved Package.resolved; fi
fi

started=$SECONDS
if ! swift build --build-tests "${scratch[@]}"; then
    echo "error: the examples did not build"
    exit 1
fi
echo "examples built in $((SECONDS - started)) s"

started=$SECONDS
# In a session of its own: if the test process dies or hangs (it is stopped after the timeout; each test also has
# its own time limit), the examples it started are killed with whatever else is left of the session.
setsid timeout -k 30 "${TETHER_EXAMPLES_TEST_TIMEOUT:-900}" swift test --skip-build "${scratch[@]}" "$@" &
session=$!
wait "$session"
status=$?
pkill -KILL -s "$session" 2>/dev/null || true
echo "example tests ran in $((SECONDS - started)) s (exit status $status)"
exit "$status"
