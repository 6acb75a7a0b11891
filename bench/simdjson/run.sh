#!/usr/bin/env bash
# simdjson's On-Demand API against SwellJSON's projection on the same NDJSON file
# and fields (a reference point; simdjson is not part of Swell).
#
#   bash bench/simdjson/run.sh FILE [REPS]     e.g. bash bench/simdjson/run.sh /tmp/swell-bench/data-1000000/records.ndjson 7
#
# Needs Debian's libsimdjson-dev and g++. Builds ndjson-fields.cpp twice: for
# the baseline x86-64 (simdjson's On-Demand code then runs its portable
# "fallback" kernel, chosen at compile time) and with -march=native (its
# AVX2 "haswell" kernel); Swift's release build targets the baseline x86-64.
# Runs the three interleaved, REPS times (default 5), and prints the minimum
# and median CPU seconds of each.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
file=$1
reps=${2:-5}
out=${TMPDIR:-/tmp}/swell-simdjson
mkdir -p "$out"
g++ -O3 -std=c++17 -o "$out/simdjson-baseline" bench/simdjson/ndjson-fields.cpp -lsimdjson
g++ -O3 -march=native -std=c++17 -o "$out/simdjson-native" bench/simdjson/ndjson-fields.cpp -lsimdjson
swift build -c release --product swell-json-bench >&2
swell=$(swift build -c release --product swell-json-bench --show-bin-path)/swell-json-bench

declare -A times
runs=("swell-projection" "simdjson-baseline" "simdjson-native")
for _ in $(seq "$reps"); do
    for run in "${runs[@]}"; do
        case $run in
        swell-projection) line=$("$swell" "$file") ;;
        *) line=$("$out/$run" "$file") ;;
        esac
        times[$run]+=" $(sed -n 's/.*cpu \([0-9.]*\) s.*/\1/p' <<< "$line")"
    done
done
bytes=$(stat -c %s "$file")
echo "| reader | CPU s (min) | CPU s (median) | MB/s (min) |"
echo "|---|---|---|---|"
for run in "${runs[@]}"; do
    echo "${times[$run]}" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk -v run="$run" -v bytes="$bytes" '
        { t[NR] = $1 }
        END { printf "| %s | %.3f | %.3f | %.0f |\n", run, t[1], t[int((NR + 1) / 2)], bytes / 1e6 / t[1] }'
done
