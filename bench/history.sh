#!/usr/bin/env bash
# What persistent history costs a sync and a re-sync (issue 23): the benchmark kit's data
# (../shared/bench/gen.py, N records, then the update snapshot: N/10 changed, N/20 new),
# served over HTTP as compare.sh serves it, imported by `swell import` with and without
# `history: true`, alternately, BENCH_REPS rounds (default 3); wall and CPU seconds by
# /usr/bin/time. Then a delta export after the history re-sync is checked against the
# rows that differ between the two stores (sqlite3, computed apart from swell).
#
#   bash bench/history.sh 1000000
#
# Needs what compare.sh needs. Not part of CI.
set -euo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "$0")/.."
KIT=$(cd ../shared/bench && pwd)
N=${1:-100000}
REPS=${BENCH_REPS:-3}
PORT=${BENCH_PORT:-18091}
WORK=${BENCH_WORK:-$KIT/work}
SWELL=${SWELL:-$PWD/.build/release/swell}
[[ -x $SWELL ]] || { echo "history.sh: build swell first: swift build -c release --product swell" >&2; exit 2; }
DATA="$WORK/data-$N" RUN="$WORK/history-$N" URL="http://127.0.0.1:$PORT"
mkdir -p "$WORK"
if ! [[ -f $DATA/manifest.json ]]; then python3 "$KIT/gen.py" "$N" "$DATA" >&2; fi
rm -rf "$RUN"; mkdir -p "$RUN"
cleanup() { "$KIT/serve.sh" --stop "$PORT" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
"$KIT/serve.sh" "$DATA" "$PORT" >&2
for _ in $(seq 1 100); do curl -sf -o /dev/null "$URL/pages/page-0001.json" && break; sleep 0.1; done

pipeline() {  # FILE URL HISTORY
  cat > "$1" <<YML
version: 3
name: bench
$3
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
    url: $2
    records: data
    paginate: { next: next }
    fields: { spot_id: spot.id, spot_name: spot.name }
exports:
  - name: delta
    entity: journal
    path: $RUN/delta.csv
    columns: [id, period, rating]
YML
  if [[ -n $3 ]]; then echo "    changes: since_last" >> "$1"; fi
}
pipeline "$RUN/plain.yml" "$URL/pages/page-0001.json" ""
pipeline "$RUN/plain-up.yml" "$URL/update/pages/page-0001.json" ""
pipeline "$RUN/history.yml" "$URL/pages/page-0001.json" "history: true"
pipeline "$RUN/history-up.yml" "$URL/update/pages/page-0001.json" "history: true"

timed() {  # LABEL CMD...
  /usr/bin/time -o "$RUN/time.txt" -f "%e %U %S" "${@:2}" > /dev/null 2>&1 || { echo "$1 failed" >&2; exit 1; }
  echo "$1 $(cat "$RUN/time.txt")" | tee -a "$RUN/times.txt"
}
for round in $(seq 1 "$REPS"); do
  for variant in plain history; do
    rm -rf "$RUN/$variant.sqlite"*
    timed "$variant-sync" "$SWELL" import "$RUN/$variant.yml" --store "$RUN/$variant.sqlite" --progress never
    cp "$RUN/$variant.sqlite" "$RUN/$variant-base.sqlite"
    timed "$variant-resync" "$SWELL" import "$RUN/$variant-up.yml" --store "$RUN/$variant.sqlite" --progress never
  done
done
echo "median wall / cpu (user+sys), $REPS rounds:"
for step in sync resync; do
  for variant in plain history; do
    wall=$(grep "^$variant-$step " "$RUN/times.txt" | awk '{print $2}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    cpu=$(grep "^$variant-$step " "$RUN/times.txt" | awk '{print $3+$4}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    printf "  %-16s wall %s s  cpu %s s\n" "$variant-$step" "$wall" "$cpu"
  done
done

# The delta after the re-sync, against the rows that differ (computed by sqlite3).
cp "$RUN/history-base.sqlite" "$RUN/delta.sqlite"
"$SWELL" export "$RUN/history.yml" --store "$RUN/delta.sqlite" --progress never > /dev/null      # first run: every row
"$SWELL" import "$RUN/history-up.yml" --store "$RUN/delta.sqlite" --progress never > /dev/null
"$SWELL" export "$RUN/history.yml" --store "$RUN/delta.sqlite" --progress never > /dev/null
expected=$(sqlite3 "$RUN/delta.sqlite" "ATTACH '$RUN/history-base.sqlite' AS b;
  SELECT 'update', j.id FROM journal j JOIN b.journal o USING(id)
   WHERE j.date IS NOT o.date OR j.height IS NOT o.height OR j.period IS NOT o.period OR j.wind IS NOT o.wind
      OR j.location IS NOT o.location OR j.rating IS NOT o.rating OR j.spot_id IS NOT o.spot_id OR j.spot_name IS NOT o.spot_name
  UNION ALL SELECT 'insert', id FROM journal WHERE id NOT IN (SELECT id FROM b.journal)
  UNION ALL SELECT 'delete', id FROM b.journal WHERE id NOT IN (SELECT id FROM journal);" | tr '|' ',' | sort | md5sum)
got=$(tail -n +2 "$RUN/delta.csv" | cut -d, -f1,2 | sort | md5sum)
echo "delta export: $(tail -n +2 "$RUN/delta.csv" | cut -d, -f1 | sort | uniq -c | tr '\n' ' ')"
if [[ $expected == "$got" ]]; then echo "check ok: the delta holds exactly the changed, new and deleted rows"
else echo "CHECK FAILED: the delta differs from the rows sqlite3 finds changed"; exit 1; fi
