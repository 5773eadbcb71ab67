#!/usr/bin/env bash
# Builds Tether's libFuzzer targets (Fuzz/, with -sanitize=fuzzer,address) and runs each for a set number of
# executions.
#
#   scripts/fuzz.sh [executions] [fuzzer ...]      executions default 100000; fuzzers default: all
#
# Each fuzzer starts from its corpus kept in the repository (Fuzz/Corpus/<fuzzer>, minimized) and its hand-made seeds
# (Fuzz/Seeds/<fuzzer>); what it finds during the run goes to Fuzz/.build/corpus/<fuzzer>. The summary line gives the
# coverage reached (libFuzzer's edges `cov` and features `ft`).
#
# Environment: FUZZ_SKIP_BUILD=1 reuses the last build; FUZZ_MAX_LEN caps the input size (default 1024; 4096 for
# FuzzNetlink, whose real messages are 1.5 KB); FUZZ_FLAGS adds libFuzzer flags; FUZZ_NICE (default 0) runs the
# fuzzers at that niceness; FUZZ_MERGE=1 merges the run's finds into Fuzz/Corpus/<fuzzer> afterwards and minimizes
# it (libFuzzer -merge=1: the smallest set of inputs with the same coverage), to commit. Crash inputs go to
# Fuzz/.build/artifacts/, logs to Fuzz/.build/logs/. Exits non-zero if any fuzzer finds a crash, leak, timeout or
# out-of-memory input.
set -euo pipefail

cd "$(dirname "$0")/../Fuzz"
runs="${1:-100000}"
shift || true
fuzzers=("$@")
if [ ${#fuzzers[@]} -eq 0 ]; then
    fuzzers=(FuzzSTX FuzzLengthField FuzzDelimiter FuzzCacheControl FuzzAuthChallenge FuzzRecordFile FuzzNetlink
        FuzzTLSDictionary FuzzNotesWire)
fi

if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
    swift build -c release -Xswiftc -sanitize=fuzzer,address
fi
bin="$(swift build -c release -Xswiftc -sanitize=fuzzer,address --show-bin-path)"
mkdir -p .build/corpus .build/artifacts .build/logs

# LeakSanitizer: leaks inside Foundation, not Tether's, are suppressed (the file says which).
export LSAN_OPTIONS="suppressions=$PWD/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

status=0
for fuzzer in "${fuzzers[@]}"; do
    corpus=".build/corpus/$fuzzer"
    log=".build/logs/$fuzzer.log"
    mkdir -p "$corpus" "Corpus/$fuzzer" "Seeds/$fuzzer"
    case "$fuzzer" in
    FuzzNetlink) max_len="${FUZZ_MAX_LEN:-4096}" ;;
    *) max_len="${FUZZ_MAX_LEN:-1024}" ;;
    esac
    start=$(date +%s)
    set +e
    # Swift's own backtracer and ASan both want the crash signal; let ASan report.
    SWIFT_BACKTRACE=enable=no nice -n "${FUZZ_NICE:-0}" "$bin/$fuzzer" \
        -runs="$runs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
        -print_final_stats=1 -artifact_prefix=".build/artifacts/$fuzzer-" \
        ${FUZZ_FLAGS:-} "$corpus" "Corpus/$fuzzer" "Seeds/$fuzzer" >"$log" 2>&1
    rc=$?
    set -e
    seconds=$(($(date +%s) - start))
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    coverage=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    if [ "$rc" -eq 0 ]; then
        echo "$fuzzer: ${executions:-?} executions in ${seconds}s, ${coverage:-cov: ?}, peak RSS ${peak:-?} MB, no crash"
    else
        status=1
        echo "$fuzzer: FAILED (exit $rc) after ${executions:-?} executions in ${seconds}s; see Fuzz/$log"
        grep -E "ERROR|Fatal error|SUMMARY|Test unit written" "$log" | head -10 || true
    fi
    if [ "${FUZZ_MERGE:-0}" = 1 ]; then
        # Minimize the kept corpus together with the run's finds into a fresh directory, then replace it.
        merged=".build/merge/$fuzzer"
        rm -rf "$merged"
        mkdir -p "$merged"
        if ! SWIFT_BACKTRACE=enable=no "$bin/$fuzzer" -merge=1 -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
            -malloc_limit_mb=64 "$merged" "Corpus/$fuzzer" "$corpus" >".build/logs/$fuzzer-merge.log" 2>&1; then
            status=1
            echo "$fuzzer: merge FAILED, corpus left as it was; see Fuzz/.build/logs/$fuzzer-merge.log"
            continue
        fi
        rm -rf "Corpus/$fuzzer"
        mv "$merged" "Corpus/$fuzzer"
        echo "$fuzzer: corpus merged: $(find "Corpus/$fuzzer" -type f | wc -l) inputs, $(du -sk "Corpus/$fuzzer" | cut -f1) KB"
    fi
done
exit $status
