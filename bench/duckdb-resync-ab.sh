#!/usr/bin/env bash
# DuckDB's re-sync and swell's, alternately (REPS rounds), on peers.sh's 1M data: a ratio
# read within one minute, where peers.sh's single run compares steps minutes apart.
# Run ../shared/bench/peers.sh 1000000 once first (it builds the data, DuckDB's venv and
# the synced databases this copies).
# usage: REPS=4 bash bench/duckdb-resync-ab.sh BIN [BIN...]
set -euo pipefail
WORK=${BENCH_WORK:-$(cd "$(dirname "$0")/../../shared/bench" && pwd)/work}
R=$WORK/peers-1000000; D=$WORK/data-1000000/update/records.ndjson
VPY=$WORK/peers-venv/bin/python
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for _ in $(seq "${REPS:-3}"); do
  cp "$R/duck-base.db" "$T/duck-up.db"
  /usr/bin/time -f "duckdb-resync %e s wall, %U user, %S sys" "$VPY" "$R/duck.py" load "$T/duck-up.db" "$D" > /dev/null 2> "$T/err"
  tail -1 "$T/err"; rm -f "$T"/duck-up.db*
  for b in "$@"; do
    cp "$R/swell-base.sqlite" "$T/up.sqlite"
    /usr/bin/time -f "$(basename "$b") %e s wall, %U user, %S sys" "$b" import "$R/resync.yml" --store "$T/up.sqlite" --progress never > /dev/null 2> "$T/err"
    tail -1 "$T/err"; rm -f "$T"/up.sqlite*
  done
done
