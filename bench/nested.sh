#!/usr/bin/env bash
# Swell's sync and re-sync of nested records (issue 10): N GitHub-issue-like
# records, each with an author (to-one User) and 0-5 labels (many-to-many Label,
# join table Issue_labels), next to the flat bench shape's figures.
#
#   bash bench/nested.sh N          e.g.  BENCH_REPS=3 bash bench/nested.sh 200000
#
# Data: bench/nested-data.py N (deterministic), served on loopback by
# ../shared/bench/serve.sh; the pipeline: bench/nested.yml. Steps
# (../shared/bench/measure.py: median wall, CPU, peak RSS): sync into an
# empty store, then re-sync of the update snapshot
# (every 10th title changed, every 20th issue's labels changed) into a copy.
# Checks (sqlite3): N issues, the link count from the manifest, an empty
# PRAGMA foreign_key_check; a failed one prints CHECK FAILED and exits 1.
#
# Environment: SWELL (default .build/release/swell), BENCH_REPS (3),
# BENCH_WORK (/tmp/swell-bench), BENCH_PORT (18095), BENCH_QUIET_WAIT (30),
# BENCH_RESULTS (bench/results).
set -euo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "${BASH_SOURCE[0]}")/.."
die() { echo "nested.sh: $*" >&2; exit 1; }
[[ $# -eq 1 && $1 =~ ^[1-9][0-9]*$ ]] || { sed -n '2,18p' "$0" >&2; exit 2; }
N=$1
KIT=$(cd ../shared/bench && pwd) || die "no benchmark kit at ../shared/bench"
WORK=${BENCH_WORK:-/tmp/swell-bench}
RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
PORT=${BENCH_PORT:-18095}
REPS=${BENCH_REPS:-3}
QUIET_WAIT=${BENCH_QUIET_WAIT:-30}
SWELL=$(realpath "${SWELL:-.build/release/swell}")
[[ -x $SWELL ]] || die "no swell binary at $SWELL (swift build -c release --product swell)"
DATA=$WORK/nested-$N
RUN=$WORK/nested-run-$N
mkdir -p "$RESULTS"
[[ -f $DATA/manifest.json && -f $DATA/pages/page-0001.json ]] || { rm -rf "$DATA"; python3 bench/nested-data.py "$N" "$DATA"; }
rm -rf "$RUN"; mkdir -p "$RUN"
OUT=$RESULTS/nested-$N.jsonl; : > "$OUT"
STARTED=""
cleanup() { [[ -n $STARTED ]] && "$KIT/serve.sh" --stop "$PORT" >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$KIT/serve.sh" "$DATA" "$PORT" >&2 || die "could not serve on port $PORT"
STARTED=1
URL="http://127.0.0.1:$PORT"
# The pipeline is bench/nested.yml; the steps point it at the store and the first page.
run_step() { echo "NESTED_STORE=$RUN/nested.sqlite NESTED_URL=$URL/$1/page-0001.json $SWELL import bench/nested.yml --log-level error"; }
BYTES=$(du -cb "$DATA"/pages/* | tail -1 | cut -f1)
python3 "$KIT/measure.py" --out "$OUT" --name nested-sync --rows "$N" --bytes "$BYTES" --basis "pages" --reps "$REPS" \
  --quiet-wait "$QUIET_WAIT" --prep "rm -f $RUN/nested.sqlite*" -- "$(run_step pages)"
cp "$RUN/nested.sqlite" "$RUN/synced.sqlite"
check() { echo "nested.sh: CHECK FAILED: $*" >&2; exit 1; }
LINKS=$(python3 -c "import json,sys; print(json.load(open('$DATA/manifest.json'))['links'])")
[[ $(sqlite3 "$RUN/nested.sqlite" "SELECT count(*) FROM Issue") == "$N" ]] || check "issues after sync"
[[ $(sqlite3 "$RUN/nested.sqlite" "SELECT count(*) FROM Issue_labels") == "$LINKS" ]] || check "links after sync"
[[ -z $(sqlite3 "$RUN/nested.sqlite" "PRAGMA foreign_key_check") ]] || check "foreign keys after sync"
python3 "$KIT/measure.py" --out "$OUT" --name nested-resync --rows "$N" --bytes "$BYTES" --basis "update pages" --reps "$REPS" \
  --quiet-wait "$QUIET_WAIT" --prep "rm -f $RUN/nested.sqlite*; cp $RUN/synced.sqlite $RUN/nested.sqlite" -- "$(run_step update/pages)"
[[ $(sqlite3 "$RUN/nested.sqlite" "SELECT count(*) FROM Issue WHERE title LIKE '%changed'") == "$((N / 10))" ]] || check "changed titles after re-sync"
[[ -z $(sqlite3 "$RUN/nested.sqlite" "PRAGMA foreign_key_check") ]] || check "foreign keys after re-sync"
python3 "$KIT/report.py" "$OUT" 2>/dev/null || cat "$OUT"
