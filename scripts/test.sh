#!/usr/bin/env bash
# Sets up what is missing, then builds and runs the whole test suite.
# This is the command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
swift test
# The store tests again against each other store: the same suite, another conformer of
# the store protocol (tests of the SQLite file itself do not apply there). The PostgreSQL
# pass starts its own throwaway server (Tests/SwellTestSupport/PostgresServer.swift).
SWELL_TEST_STORE=memory swift test --skip-build --filter SwellStoreTests
SWELL_TEST_STORE=postgres swift test --skip-build --filter SwellStoreTests
