#!/usr/bin/env bash
# Builds swell in release mode and runs the benchmark kit's side-by-side
# comparison (../shared/bench/compare.sh) for each N given (default 100000),
# then prints where the tables went. Not part of CI.
#
#   bash bench/run.sh 100000 1000000
#
# Needs: sqlite3, curl, gzip, pigz, /usr/bin/time, python3 (and optionally
# nginx-light): `apt-get install -y sqlite3 curl gzip pigz time nginx-light`.
# Data and stores go to $BENCH_WORK (default /tmp/swell-bench); results to
# bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
kit=../shared/bench
[ -x "$kit/compare.sh" ] || { echo "bench: no benchmark kit at $kit" >&2; exit 2; }
swift build -c release --product swell
export SWELL="$PWD/.build/release/swell"
export BENCH_WORK=${BENCH_WORK:-/tmp/swell-bench}
export BENCH_RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
mkdir -p "$BENCH_RESULTS"
for n in "${@:-100000}"; do
    bash "$kit/compare.sh" "$n" | tee "$BENCH_RESULTS/compare-$n.md"
done
