#!/usr/bin/env bash
# The long crash-safety check (issue 5): `swell run` of N records (default
# 1,000,000) from a loopback HTTP server, killed with SIGKILL at K random
# moments (default 20), each in a fresh store. After each kill: the store
# passes PRAGMA integrity_check, every row it holds is exactly the
# uninterrupted run's row for that id (no half-written record), and the export
# path holds nothing or a complete gzip file. Then a re-run must give exactly
# the uninterrupted run's rows and byte-identical export; it resumes where the
# killed run's saved pages end (README, "Resuming a stopped source"): its
# report's `resumed_from` is printed, and it must never claim more pages than
# the killed run left whole in the store (10,000 records a page, a batch a
# page: the default batch of a flat source). Not part of CI.
#
#   bash bench/kill-test.sh [N] [K]
#
# KILL_VERSION=4 runs a version-4 file instead: a `for_each` over the page files (one page an
# item), KILL_CONCURRENCY (default 16) of them in flight at once, applied in item order;
# `resumed_from` is then summed over the items (README, "Real networks").
#
# Needs: python3, gzip, curl and the benchmark kit (../shared/bench: gen.py,
# serve.sh). Data goes to $BENCH_WORK (default /tmp/swell-bench); the work
# folder to $KILL_WORK (default /tmp/swell-kill). Prints one line per kill and
# a summary; exits non-zero if any check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
K=${2:-20}
kit=../shared/bench
[ -f "$kit/gen.py" ] || { echo "kill-test: no benchmark kit at $kit" >&2; exit 2; }
swift build -c release --product swell >&2
SWELL="$PWD/.build/release/swell"
DATA=${BENCH_WORK:-/tmp/swell-bench}/data-$N
WORK=${KILL_WORK:-/tmp/swell-kill}
PORT=${KILL_PORT:-18097}
[ -f "$DATA/manifest.json" ] || python3 "$kit/gen.py" "$N" "$DATA" >&2
rm -rf "$WORK" && mkdir -p "$WORK"
bash "$kit/serve.sh" "$DATA" "$PORT" >&2
trap 'bash "$kit/serve.sh" --stop "$PORT" >&2 || true' EXIT

VERSION=${KILL_VERSION:-1}
if [ "$VERSION" = 4 ]; then
    items=$(cd "$DATA/pages" && ls page-*.json | paste -sd, -)
    top="concurrency: ${KILL_CONCURRENCY:-16}"
    source_url="http://127.0.0.1:$PORT/pages/\${item}"
    paging="for_each: [$items]"
else
    top=""
    source_url="http://127.0.0.1:$PORT/pages/page-0001.json"
    paging="paginate: { next: next }"
fi
cat > "$WORK/kill.yml" <<EOF
version: $VERSION
name: kill
$top
entities:
  journal:
    key: [id]
    attributes:
      id: integer
      date: date
      height: string?
      period: string?
      wind: string?
      location: string?
      rating: integer?
      spot_id: integer?
      spot_name: string?
sources:
  - name: journal
    entity: journal
    url: "$source_url"
    records: data
    $paging
    fields: { spot_id: spot.id, spot_name: spot.name }
exports:
  - name: journal
    entity: journal
    path: out/journal.csv.gz
    columns: [id, date, height, period, wind, location, rating, spot_id, spot_name]
    sort: [id]
EOF

# The uninterrupted run: its store and export are what every re-run must give.
mkdir -p "$WORK/reference"
start=$(date +%s.%N)
(cd "$WORK/reference" && "$SWELL" run ../kill.yml --store ref.sqlite --progress never > /dev/null 2>&1)
duration=$(python3 -c "import time; print(round(time.time() - $start, 3))")
echo "uninterrupted run: $duration s"

check_store() {  # store reference → prints problems, nothing when fine
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ok = db.execute("PRAGMA integrity_check").fetchone()[0]
if ok != "ok": print("integrity_check:", ok)
db.execute("ATTACH ? AS ref", (sys.argv[2],))
cols = "date, height, period, wind, location, rating, spot_id, spot_name"
bad = db.execute(f"SELECT count(*) FROM journal j LEFT JOIN ref.journal r USING(id) "
                 f"WHERE r.id IS NULL OR ({', '.join('j.' + c for c in cols.split(', '))}) "
                 f"IS NOT ({', '.join('r.' + c for c in cols.split(', '))})").fetchone()[0]
if bad: print(f"{bad} rows are not whole records")
PY
}

same_rows() {  # store reference → prints the differing row count
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("ATTACH ? AS ref", (sys.argv[2],))
cols = "id, date, height, period, wind, location, rating, spot_id, spot_name"
a = db.execute(f"SELECT count(*) FROM (SELECT {cols} FROM journal EXCEPT SELECT {cols} FROM ref.journal)").fetchone()[0]
b = db.execute(f"SELECT count(*) FROM (SELECT {cols} FROM ref.journal EXCEPT SELECT {cols} FROM journal)").fetchone()[0]
print(a + b)
PY
}

failures=0
for i in $(seq 1 "$K"); do
    dir="$WORK/kill-$i"
    mkdir -p "$dir"
    # A random moment within the uninterrupted run's duration (fetch, saves or export).
    delay=$(python3 -c "import random; print(round(random.uniform(0.05, $duration), 3))")
    (cd "$dir" && exec "$SWELL" run ../kill.yml --store s.sqlite --progress never > /dev/null 2> run.log) &
    pid=$!
    sleep "$delay"
    kill -KILL "$pid" 2> /dev/null && killed=yes || killed="no (it had ended)"
    wait "$pid" 2> /dev/null || true
    rows=$(python3 -c "import sqlite3; print(sqlite3.connect('$dir/s.sqlite').execute('SELECT count(*) FROM journal').fetchone()[0])" 2>/dev/null || echo 0)
    problems=""
    if [ -f "$dir/s.sqlite" ]; then problems=$(check_store "$dir/s.sqlite" "$WORK/reference/ref.sqlite"); fi
    export_state="none"
    if [ -f "$dir/out/journal.csv.gz" ]; then
        if gzip -t "$dir/out/journal.csv.gz" 2> /dev/null; then export_state="complete"; else export_state="PARTIAL"; problems+=" partial export at the target path"; fi
    fi
    (cd "$dir" && "$SWELL" run ../kill.yml --store s.sqlite --report rerun.json --progress never > /dev/null 2>> run.log) \
        || problems+=" re-run failed (see $dir/run.log)"
    # A kill before the first commit leaves nothing to resume (0); one after the last page was
    # saved leaves "every page saved" (the re-run fetches nothing, only the last save is left).
    resumed=$(python3 -c "import json; print(sum(s.get('resumed_from', 0) for s in json.load(open('$dir/rerun.json'))['sources']))" 2>/dev/null || echo 0)
    # The killed run's position counts whole pages it saved: never more than its rows hold.
    [ $((resumed * 10000)) -le "$rows" ] || problems+=" resumed from page $resumed with only $rows rows kept"
    diff_rows=$(same_rows "$dir/s.sqlite" "$WORK/reference/ref.sqlite")
    [ "$diff_rows" = 0 ] || problems+=" re-run store differs in $diff_rows rows"
    cmp -s "$dir/out/journal.csv.gz" "$WORK/reference/out/journal.csv.gz" || problems+=" re-run export differs"
    if [ -n "$problems" ]; then failures=$((failures + 1)); verdict="FAIL:$problems"; else verdict="ok"; fi
    printf 'kill %2d at %6.3f s (killed: %s): %7d rows kept, export %s; re-run from page %3d: %s\n' "$i" "$delay" "$killed" "$rows" "$export_state" "$resumed" "$verdict"
    [ -n "$problems" ] || rm -rf "$dir"
done
echo "kill-test: N=$N, version $VERSION, $K kills, $failures failed"
[ "$failures" = 0 ]
