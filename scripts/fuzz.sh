#!/usr/bin/env bash
# Builds and runs the libFuzzer targets under fuzz/ against the real module
# sources (swiftc -sanitize=fuzzer,address), each for SECONDS (default 60).
#   bash scripts/fuzz.sh [SECONDS] [json|predicate|csv ...]
# Crashes are written to fuzz/artifacts/. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}; shift || true
targets=("${@:-json predicate csv}")
read -r -a targets <<< "${targets[*]}"
out=.build-fuzz; mkdir -p "$out" fuzz/artifacts fuzz/corpus
log="$out/build.log"
# Builds Sources/NAME as a static library and module in $out, for a fuzz target that imports it.
module() {
    swiftc -sanitize=address -O -swift-version 6 -parse-as-library -module-name "$1" \
        -emit-module -emit-module-path "$out/$1.swiftmodule" -emit-library -static \
        Sources/"$1"/*.swift -o "$out/lib$1.a" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
}
for target in "${targets[@]}"; do
    : > "$log"
    case "$target" in
    json)
        swiftc -sanitize=fuzzer,address -O -swift-version 6 -parse-as-library -module-name SwellJSON \
            Sources/SwellJSON/*.swift fuzz/JSONReaderFuzz.swift -o "$out/json-fuzz" > "$log" 2>&1 || { cat "$log" >&2; exit 1; } ;;
    predicate)
        # SwellStore imports SwellCalendar and SwellLocks: each is built first as a module of its own.
        module SwellCalendar
        module SwellLocks
        swiftc -sanitize=fuzzer,address -O -swift-version 6 -parse-as-library -package-name swell -module-name SwellStore \
            -I "$out" -L "$out" -lSwellCalendar -lSwellLocks \
            -I Sources/CSQLite -Xcc -fmodule-map-file=Sources/CSQLite/module.modulemap -lsqlite3 \
            $(ls Sources/SwellStore/*/*.swift) fuzz/PredicateFuzz.swift -o "$out/predicate-fuzz" > "$log" 2>&1 || { cat "$log" >&2; exit 1; } ;;
    csv)
        module SwellLocks
        swiftc -sanitize=fuzzer,address -O -swift-version 6 -parse-as-library -package-name swell -module-name SwellCSV \
            -I "$out" -L "$out" -lSwellLocks \
            -I Sources/CZlib -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap -lz \
            -I Sources/CLibDeflate -Xcc -fmodule-map-file=Sources/CLibDeflate/module.modulemap -ldeflate \
            Sources/SwellCSV/*.swift fuzz/CSVWriterFuzz.swift -o "$out/csv-fuzz" > "$log" 2>&1 || { cat "$log" >&2; exit 1; } ;;
    *) echo "fuzz: unknown target $target" >&2; exit 2 ;;
    esac
    mkdir -p "fuzz/corpus/$target"
    seeds=()
    [ "$target" = json ] && seeds=(../shared/fixtures/JSONTestSuite/test_parsing)
    echo "fuzz: $target for ${seconds}s"
    "$out/$target-fuzz" -max_total_time="$seconds" -artifact_prefix="fuzz/artifacts/$target-" -print_final_stats=1 \
        "fuzz/corpus/$target" "${seeds[@]}" 2>&1 | grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Done" || true
done
