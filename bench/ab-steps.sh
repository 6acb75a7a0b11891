#!/usr/bin/env bash
# A/B of two release `swell` binaries on the same data, runs alternated, CPU seconds
# (user + sys) per run: the way a change is checked against the build before it when
# this machine's wall times move by ±25 %.
#
#   BEFORE=/tmp/before/.build/release/swell AFTER=.build/release/swell \
#     bash bench/ab-steps.sh ROUNDS STEP...     e.g.  bash bench/ab-steps.sh 7 sync resync export append nsync nresync
#
# Steps, on ../shared/bench/gen.py's 1M records (made once in $BENCH_WORK/ab-data) and
# bench/nested-data.py's 200k (served on loopback by ../shared/bench/serve.sh):
#   sync    import of records.ndjson (peers.sh's input, format: ndjson) into a new store
#   resync  import of update/records.ndjson into a copy of that store
#   export  export of the whole table to .csv.gz, level 6
#   append  the sync's file with `mode: append` (the objects write stage, `--workers` workers)
#   hsync / hresync   the same records as compare.sh reads them: 100 JSON pages over loopback
#           HTTP (`next` links), into a new store, and the update pages into a copy
#   nsync / nresync   bench/nested.yml's sync and re-sync (the graph write stage)
# Prints one line per run and, at the end, each step's medians and their ratio.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
KIT=$(cd ../shared/bench && pwd)
WORK=${BENCH_WORK:-/tmp/swell-bench}/ab
N=${AB_RECORDS:-1000000}
NESTED=${AB_NESTED:-200000}
PORT=${BENCH_PORT:-18097}
HPORT=$((PORT + 1))
declare -A BIN=([before]=$(realpath "${BEFORE:?BEFORE=path of the first swell}") [after]=$(realpath "${AFTER:?AFTER=path of the second}"))
ROUNDS=$1; shift
mkdir -p "$WORK"
DATA=$WORK/data-$N
[[ -f $DATA/records.ndjson ]] || python3 "$KIT/gen.py" "$N" "$DATA" >&2
NDATA=${BENCH_WORK:-/tmp/swell-bench}/nested-$NESTED
[[ -f $NDATA/manifest.json ]] || python3 bench/nested-data.py "$NESTED" "$NDATA" >&2
"$KIT/serve.sh" "$NDATA" "$PORT" >/dev/null
"$KIT/serve.sh" "$DATA" "$HPORT" >/dev/null
trap '"$KIT/serve.sh" --stop "$PORT" >/dev/null 2>&1 || true; "$KIT/serve.sh" --stop "$HPORT" >/dev/null 2>&1 || true' EXIT
pipeline() {  # FILE URL MODE READING
  cat > "$1" <<YML
version: 3
name: ab
entities:
  journal:
    key: [id]
    attributes: { id: integer, date: date, height: string?, period: string?, wind: string?, location: string?,
                  rating: integer?, spot_id: integer?, spot_name: string? }
sources:
  - name: journal
    entity: journal
    url: $2
    mode: $3
$4
    fields: { spot_id: spot.id, spot_name: spot.name }
exports:
  - name: journal
    entity: journal
    path: $WORK/out.csv.gz
    columns: [id, date, height, period, wind, location, rating, spot_id, spot_name]
    sort: [id]
    gzip_level: 6
YML
}
ND="    format: ndjson"
PAGES="    records: data
    paginate: { next: next }"
pipeline "$WORK/sync.yml" "$DATA/records.ndjson" upsert "$ND"
pipeline "$WORK/resync.yml" "$DATA/update/records.ndjson" upsert "$ND"
pipeline "$WORK/append.yml" "$DATA/records.ndjson" append "$ND"
pipeline "$WORK/hsync.yml" "http://127.0.0.1:$HPORT/pages/page-0001.json" upsert "$PAGES"
pipeline "$WORK/hresync.yml" "http://127.0.0.1:$HPORT/update/pages/page-0001.json" upsert "$PAGES"
RESULTS=$WORK/results.txt; : > "$RESULTS"
for round in $(seq 1 "$ROUNDS"); do
  for step in "$@"; do
    for side in before after; do
      swell=${BIN[$side]}; s=$WORK/$side
      case $step in
        sync)    rm -f $s-s.sqlite*; cmd="$swell import $WORK/sync.yml --store $s-s.sqlite --progress never" ;;
        resync)  rm -f $s-r.sqlite*; cp $s-s.sqlite $s-r.sqlite; cmd="$swell import $WORK/resync.yml --store $s-r.sqlite --progress never" ;;
        export)  cmd="$swell export $WORK/sync.yml --store $s-s.sqlite --progress never" ;;
        append)  rm -f $s-a.sqlite*; cmd="$swell import $WORK/append.yml --store $s-a.sqlite --progress never" ;;
        hsync)   rm -f $s-h.sqlite*; cmd="$swell import $WORK/hsync.yml --store $s-h.sqlite --progress never" ;;
        hresync) rm -f $s-g.sqlite*; cp $s-h.sqlite $s-g.sqlite; cmd="$swell import $WORK/hresync.yml --store $s-g.sqlite --progress never" ;;
        nsync)   rm -f $s-n.sqlite*; export NESTED_STORE=$s-n.sqlite NESTED_URL=http://127.0.0.1:$PORT/pages/page-0001.json
                 cmd="$swell import $ROOT/bench/nested.yml --log-level error" ;;
        nresync) rm -f $s-m.sqlite*; cp $s-n.sqlite $s-m.sqlite; export NESTED_STORE=$s-m.sqlite NESTED_URL=http://127.0.0.1:$PORT/update/pages/page-0001.json
                 cmd="$swell import $ROOT/bench/nested.yml --log-level error" ;;
        *) echo "ab-steps.sh: unknown step $step" >&2; exit 2 ;;
      esac
      /usr/bin/time -f "%U %S %e %M" -o "$WORK/time" $cmd > /dev/null 2> "$WORK/err" || { echo "FAILED: $cmd" >&2; cat "$WORK/err" >&2; exit 1; }
      read -r user sys wall rss < "$WORK/time"
      echo "$round $step $side $(echo "$user + $sys" | bc) $wall $((rss / 1024))" | tee -a "$RESULTS"
    done
  done
done
python3 - "$RESULTS" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _, step, side, cpu, wall, rss = line.split()
    runs.setdefault(step, {}).setdefault(side, []).append((float(cpu), float(wall), int(rss)))
print("| step | CPU s before (median) | after | after / before | wall before / after | peak RSS MiB before / after |")
print("| --- | --- | --- | --- | --- | --- |")
for step, sides in runs.items():
    b, a = sides["before"], sides["after"]
    cb, ca = statistics.median(x[0] for x in b), statistics.median(x[0] for x in a)
    wb, wa = statistics.median(x[1] for x in b), statistics.median(x[1] for x in a)
    print(f"| {step} | {cb:.2f} | {ca:.2f} | {ca / cb:.3f} | {wb:.2f} / {wa:.2f} | {max(x[2] for x in b)} / {max(x[2] for x in a)} |")
PY
