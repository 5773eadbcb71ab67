#!/usr/bin/env bash
# Regenerates docs/man/tether.1 from the command's own definitions (swift-argument-parser's generate-manual plugin).
# The plugin builds `tether` in release mode: the first run takes 10-20 minutes on a 2-core machine.
# A test (TetherCommandTests, "the man page is current") fails when an option or subcommand is missing from it.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/man
swift package --disable-sandbox generate-manual --output-directory docs/man \
    --authors "The Tether developers" --date "$(date -u +%Y-%m-%d)"
echo "wrote docs/man/tether.1 (man ./docs/man/tether.1)"
