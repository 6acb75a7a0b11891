#!/usr/bin/env bash
# Swell against PostgreSQL (issue 11, item 2) next to the floors PostgreSQL itself
# gives on the same data: N records of the bench shape (../shared/bench/gen.py),
# a throwaway local server started and stopped by this script.
#
#   bash bench/postgres.sh N            e.g.  BENCH_REPS=3 bash bench/postgres.sh 100000
#
# Steps (../shared/bench/measure.py: median wall, CPU, peak RSS of the client):
#   pg-copy            \copy records.csv into an empty table (the COPY floor)
#   pg-staged-upsert   the update snapshot: COPY into a temporary table, then one
#                      INSERT … SELECT … ON CONFLICT DO UPDATE … WHERE IS DISTINCT FROM
#   pg-copy-to-pigz    \copy (SELECT … ORDER BY id) TO STDOUT | pigz -6
#   swell-pg-sync      swell import: the pages over HTTP into an empty PostgreSQL store
#   swell-pg-resync    swell import: the update pages into that store (prep: a fresh sync)
#   swell-pg-export    swell export: the whole table to .csv.gz, level 6
#   swell-sqlite-sync  the same sync into a SQLite store (the pipeline's own work — fetch,
#   swell-sqlite-resync  parse, map, contexts — is the same; only the store differs)
# and the ratios the issue sets: sync / copy ≤ 1.5, re-sync / staged upsert ≤ 1.0,
# export / copy-to-pigz ≤ 1.0; the CPU columns give the floor arithmetic (BENCHMARKS.md).
#
# Needs postgresql (initdb, pg_ctl, psql), pigz, curl, python3; as root the server
# runs as the postgres user. Environment: SWELL (default .build/release/swell),
# BENCH_REPS (3), BENCH_WORK (/tmp/swell-bench), BENCH_PORT (18096 HTTP),
# BENCH_PG_PORT (15433), BENCH_RESULTS (bench/results).
set -euo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "${BASH_SOURCE[0]}")/.."
die() { echo "postgres.sh: $*" >&2; exit 1; }
[[ $# -eq 1 && $1 =~ ^[1-9][0-9]*$ ]] || { sed -n '2,27p' "$0" >&2; exit 2; }
N=$1
KIT=$(cd ../shared/bench && pwd) || die "no benchmark kit at ../shared/bench"
WORK=${BENCH_WORK:-/tmp/swell-bench}
RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
PORT=${BENCH_PORT:-18096}
PGPORT=${BENCH_PG_PORT:-15433}
REPS=${BENCH_REPS:-3}
SWELL=$(realpath "${SWELL:-.build/release/swell}")
[[ -x $SWELL ]] || die "no swell binary at $SWELL (swift build -c release --product swell)"
for tool in psql pigz curl python3; do command -v "$tool" >/dev/null || die "$tool is required (apt-get install postgresql pigz curl)"; done
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[[ -x $BIN/initdb ]] || die "PostgreSQL is not installed (bash scripts/setup.sh)"
DATA=$WORK/data-$N
RUN=$WORK/pg-run-$N
PGDIR=$WORK/pg-server
mkdir -p "$RESULTS" "$WORK"
[[ -f $DATA/manifest.json && -f $DATA/records.csv ]] || { rm -rf "$DATA"; python3 "$KIT/gen.py" "$N" "$DATA"; }
rm -rf "$RUN"; mkdir -p "$RUN"
OUT=$RESULTS/postgres-$N.jsonl; : > "$OUT"
as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
HTTP_STARTED=""
cleanup() {
  [[ -n $HTTP_STARTED ]] && "$KIT/serve.sh" --stop "$PORT" >/dev/null 2>&1 || true
  [[ -d $PGDIR/data ]] && as_pg "$BIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$PGDIR"
}
trap cleanup EXIT
rm -rf "$PGDIR"; mkdir -p "$PGDIR"; chmod 777 "$PGDIR"
as_pg "$BIN/initdb" -D "$PGDIR/data" -U swell --auth=trust -E UTF8 --locale=C >/dev/null
as_pg "$BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1" start >/dev/null
DB="postgresql://swell@127.0.0.1:$PGPORT/postgres"
PSQL="psql -X -q -v ON_ERROR_STOP=1 $DB"
"$KIT/serve.sh" "$DATA" "$PORT" >&2 || die "could not serve on port $PORT"
HTTP_STARTED=1
URL="http://127.0.0.1:$PORT"

COLUMNS="id, date, height, period, wind, location, rating, spot_id, spot_name"
TABLE="CREATE TABLE journal (id bigint PRIMARY KEY, date timestamptz, height text, period text, wind text, location text, rating bigint, spot_id bigint, spot_name text)"
measure() {  # NAME ROWS BYTES BASIS PREP CMD
  python3 "$KIT/measure.py" --out "$OUT" --name "$1" --rows "$2" --bytes "$3" --basis "$4" --reps "$REPS" --prep "$5" -- "$6"
}
size() { du -cb "$@" | tail -1 | cut -f1; }
NU=$(( N + N / 20 ))

# Floors: PostgreSQL's own COPY paths.
echo "DROP SCHEMA IF EXISTS floor CASCADE; CREATE SCHEMA floor; SET search_path TO floor; $TABLE;" > "$RUN/fresh.sql"
measure pg-copy "$N" "$(size "$DATA/records.csv")" records.csv "$PSQL -f $RUN/fresh.sql" \
  "$PSQL -c \"\\copy floor.journal FROM '$DATA/records.csv' CSV HEADER\""
cat > "$RUN/upsert.sql" <<SQL
BEGIN;
CREATE TEMP TABLE stage (LIKE floor.journal) ON COMMIT DROP;
\copy stage FROM '$DATA/update/records.csv' CSV HEADER
INSERT INTO floor.journal SELECT * FROM stage
ON CONFLICT (id) DO UPDATE SET date = excluded.date, height = excluded.height, period = excluded.period, wind = excluded.wind,
  location = excluded.location, rating = excluded.rating, spot_id = excluded.spot_id, spot_name = excluded.spot_name
WHERE (journal.date, journal.height, journal.period, journal.wind, journal.location, journal.rating, journal.spot_id, journal.spot_name)
  IS DISTINCT FROM (excluded.date, excluded.height, excluded.period, excluded.wind, excluded.location, excluded.rating, excluded.spot_id, excluded.spot_name);
COMMIT;
SQL
measure pg-staged-upsert "$NU" "$(size "$DATA/update/records.csv")" update-records.csv \
  "$PSQL -f $RUN/fresh.sql && $PSQL -c \"\\copy floor.journal FROM '$DATA/records.csv' CSV HEADER\"" "$PSQL -f $RUN/upsert.sql"
$PSQL -f "$RUN/fresh.sql" && $PSQL -c "\\copy floor.journal FROM '$DATA/records.csv' CSV HEADER"
measure pg-copy-to-pigz "$N" 0 "CSV produced" "rm -f $RUN/floor.csv.gz" \
  "$PSQL -c \"\\copy (SELECT $COLUMNS FROM floor.journal ORDER BY id) TO STDOUT CSV HEADER\" | pigz -6 > $RUN/floor.csv.gz"

# Swell.
cat > "$RUN/bench.yml" <<YAML
version: 1
name: bench
entities:
  journal:
    key: [id]
    attributes: { id: integer, date: date, height: string?, period: string?, wind: string?, location: string?, rating: integer?, spot_id: integer?, spot_name: string? }
sources:
  - { name: journal, entity: journal, url: "\${BENCH_URL}", records: data, paginate: { next: next }, fields: { spot_id: spot.id, spot_name: spot.name } }
exports:
  - { name: journal, entity: journal, path: $RUN/swell.csv.gz, columns: [$COLUMNS], sort: [id], gzip_level: 6 }
YAML
STORE="$DB?schema=swell"
SYNC="BENCH_URL=$URL/pages/page-0001.json $SWELL import $RUN/bench.yml --store '$STORE' --progress never --log-level error"
DROP="$PSQL -c 'DROP SCHEMA IF EXISTS swell CASCADE'"
measure swell-pg-sync "$N" "$(size "$DATA"/pages/*)" pages "$DROP" "$SYNC"
measure swell-pg-resync "$NU" "$(size "$DATA"/update/pages/*)" update-pages "$DROP && $SYNC" \
  "BENCH_URL=$URL/update/pages/page-0001.json $SWELL import $RUN/bench.yml --store '$STORE' --progress never --log-level error"
measure swell-pg-export "$N" 0 "CSV produced" "rm -f $RUN/swell.csv.gz" \
  "BENCH_URL=unused $SWELL export $RUN/bench.yml --store '$STORE' --progress never --log-level error"
LITE="$RUN/bench.sqlite"
LSYNC="BENCH_URL=$URL/pages/page-0001.json $SWELL import $RUN/bench.yml --store $LITE --progress never --log-level error"
measure swell-sqlite-sync "$N" "$(size "$DATA"/pages/*)" pages "rm -f $LITE $LITE-wal $LITE-shm $LITE.lock" "$LSYNC"
measure swell-sqlite-resync "$NU" "$(size "$DATA"/update/pages/*)" update-pages "rm -f $LITE $LITE-wal $LITE-shm $LITE.lock && $LSYNC" \
  "BENCH_URL=$URL/update/pages/page-0001.json $SWELL import $RUN/bench.yml --store $LITE --progress never --log-level error"
ROWS=$($PSQL -At -c 'SELECT count(*) FROM swell.journal')
[[ $ROWS == "$NU" ]] || die "CHECK FAILED: $ROWS rows after the re-sync, expected $NU"
python3 "$KIT/report.py" "$OUT" 2>/dev/null || cat "$OUT"
python3 - "$OUT" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line); rows[r["name"]] = r
def wall(n): return rows[n]["wall_s_median"]
for a, b, goal in [("swell-pg-sync", "pg-copy", 1.5), ("swell-pg-resync", "pg-staged-upsert", 1.0), ("swell-pg-export", "pg-copy-to-pigz", 1.0),
                   ("swell-sqlite-sync", "pg-copy", 1.5), ("swell-sqlite-resync", "pg-staged-upsert", 1.0)]:
    try:
        ratio = wall(a) / wall(b)
        print(f"{a} / {b}: {ratio:.2f} (goal ≤ {goal}) {'met' if ratio <= goal else 'MISSED'}")
    except Exception as e:
        print(f"{a} / {b}: no ratio ({e})")
PY
