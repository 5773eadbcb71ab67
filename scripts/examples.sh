#!/usr/bin/env bash
# The Examples package (Examples/): builds every example program, then runs the tests that start each one as a
# child process against loopback (the tests run the built executables: build first). Extra arguments go to
# `swift test` (e.g. --filter EchoTests). Exits non-zero when the build or any test fails.
set -uo pipefail
cd "$(dirname "$0")/../Examples"

started=$SECONDS
if ! swift build; then
    echo "error: the examples did not build"
    exit 1
fi
echo "examples built in $((SECONDS - started)) s"

started=$SECONDS
# A test that hangs is stopped (each test also has its own time limit); children it started die with it.
timeout -k 30 "${TETHER_EXAMPLES_TEST_TIMEOUT:-900}" swift test "$@"
status=$?
echo "example tests ran in $((SECONDS - started)) s (exit status $status)"
exit "$status"
