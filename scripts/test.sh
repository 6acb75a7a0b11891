#!/usr/bin/env bash
# Sets up what is missing, then builds and runs the whole test suite.
# This is the command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
swift test
