#!/usr/bin/env bash
# SwellJSON's projection (issue 21, item 3) on the kit's bench records, one core.
#
#   bash bench/json-projection.sh [N]      e.g.  BENCH_REPS=7 bash bench/json-projection.sh 1000000
#
# Builds swell-json-bench in release, generates N records with
# ../shared/bench/gen.py (reused when its manifest says N), then, interleaved
# BENCH_REPS times, times on records.ndjson (and records.json, one array):
#   projection   JSONProjectionReader, fields id, date, height, period, wind,
#                location, rating, spot.name (every top-level scalar and a nested
#                path), into a sink that folds every value into a checksum
#   tree         JSONPageReader with the same fields looked up in each record's JSONValue
# Each pass feeds the file from memory in 64 KiB chunks and reports the
# thread's CPU seconds; the table shows the minimum and the median over the
# reps, and MB/s (10^6 bytes) of the minimum. Then it counts heap allocations
# (../shared/tools/count-allocs.sh) for the first 20,000 and 200,000 records:
# allocations per record = (count at 200k - count at 20k) / 180,000.
#
# Environment: BENCH_REPS (default 5), BENCH_WORK (default /tmp/swell-bench),
# PYTHON (default /usr/bin/python3).
set -euo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n=${1:-1000000}
reps=${BENCH_REPS:-5}
work=${BENCH_WORK:-/tmp/swell-bench}
python=${PYTHON:-/usr/bin/python3}
data="$work/data-$n"

swift build -c release --product swell-json-bench >&2
bench=$(swift build -c release --product swell-json-bench --show-bin-path)/swell-json-bench

if ! grep -q "\"n\": $n\b" "$data/manifest.json" 2>/dev/null; then
    mkdir -p "$work"
    "$python" ../shared/bench/gen.py "$n" "$data" >&2
fi

# cpu_seconds FILE READER [ARGS...]: one pass's CPU seconds.
cpu_seconds() {
    "$bench" "$@" | sed -n 's/.*cpu \([0-9.]*\) s.*/\1/p'
}

declare -A times
cases=("ndjson projection" "ndjson tree" "json projection" "json tree")
for _ in $(seq "$reps"); do
    for c in "${cases[@]}"; do
        read -r layout reader <<< "$c"
        times[$c]+=" $(cpu_seconds "$data/records.$layout" --reader "$reader" --format "$layout")"
    done
done

echo "| file | reader | MB | CPU s (min) | CPU s (median) | MB/s (min) |"
echo "|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
    read -r layout reader <<< "$c"
    bytes=$(stat -c %s "$data/records.$layout")
    echo "${times[$c]}" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk -v layout="$layout" -v reader="$reader" -v bytes="$bytes" '
        { t[NR] = $1 }
        END { printf "| records.%s | %s | %.1f | %.3f | %.3f | %.0f |\n", layout, reader, bytes / 1e6, t[1], t[int((NR + 1) / 2)], bytes / 1e6 / t[1] }'
done

# Allocations per record, from prefixes of the NDJSON file (and the same records as one array).
allocs() {
    ../shared/tools/count-allocs.sh "$bench" "$@" 2>&1 >/dev/null |
        sed -n 's/MALLOCS malloc=\([0-9]*\) calloc=\([0-9]*\) realloc=\([0-9]*\) posix_memalign=\([0-9]*\)/\1 \2 \3 \4/p' |
        awk '{ print $1 + $2 + $3 + $4 }'
}
for count in 20000 200000; do
    head -n "$count" "$data/records.ndjson" > "$work/prefix-$count.ndjson"
    { echo "["; sed '$!s/$/,/' "$work/prefix-$count.ndjson"; echo "]"; } > "$work/prefix-$count.json"
done
echo
echo "| file | reader | allocations at 20k | at 200k | per record |"
echo "|---|---|---|---|---|"
for c in "${cases[@]}"; do
    read -r layout reader <<< "$c"
    small=$(allocs "$work/prefix-20000.$layout" --reader "$reader" --format "$layout")
    large=$(allocs "$work/prefix-200000.$layout" --reader "$reader" --format "$layout")
    awk -v layout="$layout" -v reader="$reader" -v small="$small" -v large="$large" \
        'BEGIN { printf "| %s | %s | %d | %d | %.6f |\n", layout, reader, small, large, (large - small) / 180000 }'
done
