#!/usr/bin/env bash
# Sets up what is missing, then builds and runs the whole test suite.
# This is the command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
swift test
# The store tests once more, against the in-memory store: the same suite, the other
# conformer of the store protocol (tests of the SQLite file itself do not apply there).
SWELL_TEST_STORE=memory swift test --skip-build --filter SwellStoreTests
