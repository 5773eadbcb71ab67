#!/usr/bin/env bash
# The whole test suite: builds every target (the test helper executables and `tether` too), then runs each test
# target in turn. Tests inside a target run in parallel; targets run one after another so that the heavy ones
# (1,000 clients, 50 MiB bodies, crash loops, network namespaces) do not starve each other on a 2-core machine.
# Extra arguments go to every `swift test` call.
set -uo pipefail
cd "$(dirname "$0")/.."

swift build --build-tests || exit 1

targets=(TetherCoreTests TetherSocketsTests TetherHTTPTests TetherReachabilityTests TetherStoreTests)
passed=0
failed=0
status=0
for target in "${targets[@]}"; do
    echo "== $target"
    log=$(mktemp)
    swift test --skip-build --filter "^${target}\." "$@" 2>&1 | tee "$log"
    code=${PIPESTATUS[0]}
    total=$(grep -Eo 'Test run with [0-9]+ tests?' "$log" | grep -Eo '[0-9]+' | tail -n 1)
    failing=$(grep -E '^✘ Test .* failed after' "$log" | wc -l)
    total=${total:-0}
    if [ "$code" -ne 0 ]; then
        status=1
        if [ "$failing" -eq 0 ]; then failing=1; fi
    fi
    if [ "$total" -eq 0 ]; then
        echo "error: $target ran no test"
        status=1
    fi
    passed=$((passed + total - failing))
    failed=$((failed + failing))
    rm -f "$log"
done
echo "tests: $passed passed, $failed failed"
exit $status
