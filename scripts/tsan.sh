#!/usr/bin/env bash
# Runs the store (core, SQLite, contexts, typed), pipeline (unit and end-to-end), HTTP engine and lock tests (SwellStoreCoreTests, SwellSQLiteTests, SwellContextsTests, SwellStoreTests, SwellPipelineTests, SwellEndToEndTests, SwellHTTPTests,
# SwellLocksTests) under ThreadSanitizer: `swift test --sanitize=thread` in its
# own build folder (.build-tsan), so the normal .build is left alone.
#   bash scripts/tsan.sh
# Every process TSan watches (the test runner and the `swell` binaries the
# pipeline tests start) writes its reports to .build-tsan/tsan-reports/; any
# report, or any failing test, makes the script exit non-zero; it ends with one
# line: "tsan: N tests, no race reported" or the number of reports. No report is
# suppressed. Takes 6 to 12 minutes on the 2-core machine from a cold
# .build-tsan (2 to 6 to build, 4 to 6 to test, depending on what else runs);
# the test run alone again after that. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-tsan
reports="$PWD/$scratch/tsan-reports"
log="$scratch/tsan-test.log"
filter='^(SwellStoreCoreTests|SwellSQLiteTests|SwellContextsTests|SwellStoreTests|SwellPipelineTests|SwellEndToEndTests|SwellLocksTests|SwellHTTPTests)\.'
mkdir -p "$scratch"
rm -rf "$reports" && mkdir -p "$reports"

if ! swift build --build-tests --sanitize=thread --scratch-path "$scratch" > "$scratch/tsan-build.log" 2>&1; then
    grep -E "error:" "$scratch/tsan-build.log" >&2 || tail -40 "$scratch/tsan-build.log" >&2
    echo "tsan: build failed (see $scratch/tsan-build.log)" >&2
    exit 1
fi

# log_path: reports go to files, one per process, also from the child `swell` processes.
export TSAN_OPTIONS="log_path=$reports/report history_size=7 second_deadlock_stack=1"
status=0
swift test --skip-build --sanitize=thread --scratch-path "$scratch" --disable-xctest --filter "$filter" > "$log" 2>&1 || status=$?

tests=$(grep -oE "Test run with [0-9]+ tests?" "$log" | grep -oE "[0-9]+" | tail -1 || true)
count=$(cat "$reports"/* 2>/dev/null | grep -c "^WARNING: ThreadSanitizer" || true)
grep -E "^✘ Test .*(failed|recorded)" "$log" | head -20 >&2 || true
grep -hE "^SUMMARY: ThreadSanitizer" "$reports"/* 2>/dev/null | sort | uniq -c | sort -rn | head -30 >&2 || true
grep -E "^[✔✘] Test run with" "$log" || tail -20 "$log"
if [ "$count" -gt 0 ]; then
    echo "tsan: ${tests:-?} tests, $count ThreadSanitizer reports (in $reports)" >&2
    exit 1
fi
if [ "$status" -ne 0 ]; then
    echo "tsan: ${tests:-?} tests, no race reported, but the test run failed with status $status (see $log)" >&2
    exit 1
fi
echo "tsan: ${tests:-?} tests, no race reported"
