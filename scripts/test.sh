#!/usr/bin/env bash
# The whole test suite: builds every target (the test helper executables too), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
swift test --skip-build "$@"
