#!/usr/bin/env bash
# Builds TetherCore's libFuzzer targets (Fuzz/, with -sanitize=fuzzer,address) and runs each for a set number of
# executions.
#
#   scripts/fuzz.sh [executions] [fuzzer ...]      executions default 100000; fuzzers default: all
#
# Environment: FUZZ_SKIP_BUILD=1 reuses the last build; FUZZ_MAX_LEN (default 1024) caps the input size; FUZZ_FLAGS
# adds libFuzzer flags; FUZZ_NICE (default 0) runs the fuzzers at that niceness. The growing corpus lives in
# Fuzz/.build/corpus/<fuzzer>, crash inputs go to Fuzz/.build/artifacts/, logs to Fuzz/.build/logs/. Exits non-zero
# if any fuzzer finds a crash, leak, timeout or out-of-memory input.
set -euo pipefail

cd "$(dirname "$0")/../Fuzz"
runs="${1:-100000}"
shift || true
fuzzers=("$@")
if [ ${#fuzzers[@]} -eq 0 ]; then
    fuzzers=(FuzzSTX FuzzLengthField FuzzDelimiter)
fi

if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
    swift build -c release -Xswiftc -sanitize=fuzzer,address
fi
bin="$(swift build -c release -Xswiftc -sanitize=fuzzer,address --show-bin-path)"
mkdir -p .build/corpus .build/artifacts .build/logs

status=0
for fuzzer in "${fuzzers[@]}"; do
    corpus=".build/corpus/$fuzzer"
    log=".build/logs/$fuzzer.log"
    mkdir -p "$corpus"
    start=$(date +%s)
    set +e
    # Swift's own backtracer and ASan both want the crash signal; let ASan report.
    SWIFT_BACKTRACE=enable=no nice -n "${FUZZ_NICE:-0}" "$bin/$fuzzer" \
        -runs="$runs" -max_len="${FUZZ_MAX_LEN:-1024}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
        -print_final_stats=1 -artifact_prefix=".build/artifacts/$fuzzer-" \
        ${FUZZ_FLAGS:-} "$corpus" "Seeds/$fuzzer" >"$log" 2>&1
    rc=$?
    set -e
    seconds=$(($(date +%s) - start))
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    if [ "$rc" -eq 0 ]; then
        echo "$fuzzer: ${executions:-?} executions in ${seconds}s, peak RSS ${peak:-?} MB, no crash"
    else
        status=1
        echo "$fuzzer: FAILED (exit $rc) after ${executions:-?} executions in ${seconds}s; see Fuzz/$log"
        grep -E "ERROR|Fatal error|SUMMARY|Test unit written" "$log" | head -10 || true
    fi
done
exit $status
