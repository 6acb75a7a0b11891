#!/usr/bin/env bash
# The one-off bulk import of one big JSON array file (issue 4): generates the
# kit's data for each N given (default 5,600,000 records: records.json is
# about 1 GB) and times `swell import` of examples/bulk-import/bulk-import.yml
# with DUMP=records.json (a file source: streamed, in constant memory),
# printing wall time, CPU time, peak RSS and the rows stored. Not part of CI.
#
#   bash bench/array-import.sh 100000 5600000
#
# Needs: python3, /usr/bin/time (`apt-get install -y time`), and the kit at
# ../shared/bench. Data goes to $BENCH_WORK (default /tmp/swell-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
kit=../shared/bench
[ -f "$kit/gen.py" ] || { echo "array-import: no benchmark kit at $kit" >&2; exit 2; }
swift build -c release --product swell >&2
SWELL="$PWD/.build/release/swell"
WORK=${BENCH_WORK:-/tmp/swell-bench}
echo "| records | records.json MB | wall s | CPU s | peak RSS MiB | rows stored |"
echo "|---|---|---|---|---|---|"
for n in "${@:-5600000}"; do
    data="$WORK/data-$n"
    [ -f "$data/manifest.json" ] || python3 "$kit/gen.py" "$n" "$data" >&2
    store="$WORK/array-$n.sqlite"
    rm -f "$store" "$store"-* "$store.lock"
    DUMP="$data/records.json" /usr/bin/time -f "%e %U %S %M" -o "$WORK/array-$n.time" \
        "$SWELL" import examples/bulk-import/bulk-import.yml --store "$store" --progress never > /dev/null
    read -r wall user sys rss < "$WORK/array-$n.time"
    rows=$(python3 -c "import sqlite3; print(sqlite3.connect('$store').execute('SELECT count(*) FROM JournalEntry').fetchone()[0])")
    mb=$(python3 -c "import os; print(round(os.path.getsize('$data/records.json') / 1e6))")
    python3 -c "print(f'| {$n:,} | $mb | $wall | {$user + $sys:.2f} | {$rss / 1024:.1f} | {$rows:,} |')"
done
