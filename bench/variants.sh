#!/usr/bin/env bash
# Swell's sync and re-sync on three key shapes of the kit's bench data
# (issue 9: the fast path must not be tuned to the bench's integer key).
#
#   bash bench/variants.sh N       e.g.  BENCH_REPS=3 SWELL_BASE=/tmp/swell-old bash bench/variants.sh 1000000
#
# Variants (the same N records, the same pages and `next` links; made by
# bench/variant-data.py from ../shared/bench/gen.py's data, see its header):
#   int   the standard data: key [id], id an integer (as compare.sh)
#   text  id replaced by the text "J-" + 10-digit zero-padded id: key [id], id: string
#   pair  id replaced by seq, the record's number within its spot: key [spot_id, seq]
# Steps, each BENCH_REPS times with ../shared/bench/measure.py (median wall,
# CPU = user+sys, peak RSS), for each binary:
#   sync     swell import of pages/ over HTTP into an empty store
#   resync   swell import of update/pages/ (N + N/20 records, N/10 changed)
#            into a copy of that binary's synced store
# Checks (by sqlite3): N rows after sync, N + N/20 after re-sync, N/10 rows
# whose period changed, the key columns' types; a failed one prints
# `CHECK FAILED: ...` and makes the exit status 1.
# Prints a markdown table (variant x binary x step) and writes it to
# bench/results/variants-N.md (raw measure.py lines: variants-N.jsonl).
#
# Environment:
#   SWELL             the binary under test (default .build/release/swell; not built here:
#                     `swift build -c release --product swell`)
#   SWELL_BASE        optional second binary (e.g. a build of main) timed side by side;
#                     the table then has swell/base ratios
#   BENCH_REPS        repetitions per step (default 3)
#   BENCH_WORK        data and stores (default /tmp/swell-bench): data-N/ (gen.py's, reused
#                     when its manifest says N), variants-N/{int,text,pair}/, variants-run-N/
#   BENCH_RESULTS     where the tables go (default bench/results)
#   BENCH_PORT        loopback port for ../shared/bench/serve.sh (default 18094)
#   BENCH_QUIET_WAIT  seconds measure.py waits for an idle machine before each rep
#                     (default 30, measure.py's; 0 for smoke tests on a busy machine)
#   PYTHON            python3 for the kit's scripts (default /usr/bin/python3)
# Needs: sqlite3, curl, /usr/bin/time, python3 (nginx-light optional, see serve.sh).
set -euo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() { sed -n '2,36p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "variants.sh: $*" >&2; exit 1; }
size() { stat -c %s "$@" | awk '{s += $1} END {print s}'; }
abspath() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

[[ $# -eq 1 && $1 =~ ^[1-9][0-9]*$ ]] || usage
N=$1
KIT=$(cd ../shared/bench 2>/dev/null && pwd) || die "no benchmark kit at ../shared/bench"
WORK=${BENCH_WORK:-/tmp/swell-bench}
RESULTS=${BENCH_RESULTS:-$PWD/bench/results}
PORT=${BENCH_PORT:-18094}
REPS=${BENCH_REPS:-3}
QUIET_WAIT=${BENCH_QUIET_WAIT:-30}
PY=${PYTHON:-/usr/bin/python3}
SWELL=${SWELL:-.build/release/swell}
SWELL_BASE=${SWELL_BASE:-}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPS must be a positive integer"
[[ -x $SWELL ]] || die "no swell binary at $SWELL (build it: swift build -c release --product swell), or set SWELL"
SWELL=$(abspath "$SWELL")
BINS=(swell) BIN_swell=$SWELL
if [[ -n $SWELL_BASE ]]; then
  [[ -x $SWELL_BASE ]] || die "SWELL_BASE=$SWELL_BASE is not an executable"
  BINS+=(base) BIN_base=$(abspath "$SWELL_BASE")
fi
for t in sqlite3 curl /usr/bin/time "$PY"; do command -v "$t" >/dev/null || die "$t is required"; done

VARIANTS=(int text pair)
DATA=$WORK/data-$N VAR=$WORK/variants-$N RUN=$WORK/variants-run-$N
OUT=$RESULTS/variants-$N.jsonl MD=$RESULTS/variants-$N.md
mkdir -p "$WORK" "$RESULTS" "$VAR"
WORK=$(cd "$WORK" && pwd) DATA=$WORK/data-$N VAR=$WORK/variants-$N RUN=$WORK/variants-run-$N

# 1. the standard data (reused when its manifest says N, as compare.sh does)
if [[ -f $DATA/manifest.json ]] && "$PY" -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(m["n"]!=int(sys.argv[2]))' "$DATA/manifest.json" "$N"; then :
else "$PY" "$KIT/gen.py" "$N" "$DATA" >&2; fi
NU=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["update"]["records"])' "$DATA/manifest.json")

# 2. the variants (remade unless variant.json names this data and this variant-data.py)
ln -sfn "$DATA" "$VAR/int"
for v in text pair; do
  if [[ -f $VAR/$v/variant.json ]] && "$PY" - "$VAR/$v/variant.json" "$DATA/manifest.json" bench/variant-data.py <<'EOF'
import hashlib, json, sys
s = json.load(open(sys.argv[1]))
h = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
sys.exit(s["source_manifest_sha256"] != h(sys.argv[2]) or s["script_sha256"] != h(sys.argv[3]))
EOF
  then echo "variants.sh: reusing $VAR/$v" >&2
  else "$PY" bench/variant-data.py "$v" "$DATA" "$VAR/$v" >&2; fi
done
rm -rf "$RUN"; mkdir -p "$RUN"; : > "$OUT"
for v in "${VARIANTS[@]}"; do cat "$VAR/$v"/pages/* "$VAR/$v"/update/pages/* > /dev/null; done  # warm the page cache

# 3. serve them on loopback; stopped on any exit (only if this run started it)
STARTED=""
cleanup() { [[ -n $STARTED ]] && "$KIT/serve.sh" --stop "$PORT" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$KIT/serve.sh" "$VAR" "$PORT" >&2 || die "could not serve $VAR on port $PORT (set BENCH_PORT)"
STARTED=1
URL="http://127.0.0.1:$PORT"
SERVER=$(cat "$KIT/.run/serve-$PORT/impl" 2>/dev/null || echo "?")

# 4. pipeline files, timed steps, checks
key_of() { case $1 in int|text) echo "id" ;; pair) echo "spot_id, seq" ;; esac; }
pipeline() {  # VARIANT FILE URL
  local keyattrs
  case $1 in
    int)  keyattrs="    key: [id]
    attributes:
      id: integer" ;;
    text) keyattrs="    key: [id]
    attributes:
      id: string" ;;
    pair) keyattrs="    key: [spot_id, seq]
    attributes:
      seq: integer" ;;
  esac
  cat > "$2" <<EOF
version: 1
name: bench-$1
entities:
  journal:
$keyattrs
      date: date
      height: string?
      period: string?
      wind: string?
      location: string?
      rating: integer?
      spot_id: $([[ $1 == pair ]] && echo integer || echo integer?)
      spot_name: string?
sources:
  - name: journal
    entity: journal
    url: $3
    records: data
    paginate: { next: next }
    fields: { spot_id: spot.id, spot_name: spot.name }
EOF
}

step() {  # NAME ROWS BYTES BASIS PREP CMD
  "$PY" "$KIT/measure.py" --out "$OUT" --name "$1" --rows "$2" --bytes "$3" --basis "$4" \
    --reps "$REPS" --quiet-wait "$QUIET_WAIT" --prep "$5" -- "$6" || true
}

fail=0
check() {  # WHAT VALUE EXPECTED
  if [[ $2 == "$3" ]]; then echo "check ok: $1 = $2" >&2
  else echo "CHECK FAILED: $1 = $2, expected $3" | tee -a "$RUN/failed" >&2; fail=1; fi
}
q() { if [[ -f $1 ]]; then sqlite3 "$1" "$2" 2>&1 || true; else echo "no store ($1)"; fi; }
rmstore() { echo "rm -f $1 $1-wal $1-shm $1-journal $1.lock"; }

for v in "${VARIANTS[@]}"; do
  pipeline "$v" "$RUN/$v.yml" "$URL/$v/pages/page-0001.json"
  pipeline "$v" "$RUN/$v-update.yml" "$URL/$v/update/pages/page-0001.json"
  pbytes=$(size "$VAR/$v"/pages/page-*.json) ubytes=$(size "$VAR/$v"/update/pages/page-*.json)
  for b in "${BINS[@]}"; do
    bin=BIN_$b s=$RUN/$v-$b.sqlite
    step "$v-$b-sync" "$N" "$pbytes" pages "$(rmstore "$s")" \
      "${!bin} import $RUN/$v.yml --store $s --progress never > /dev/null"
    if [[ ! -f $s ]]; then  # the step failed: once more untimed, so its error shows
      "${!bin}" import "$RUN/$v.yml" --store "$s" --progress never > /dev/null || true
    fi
  done
  for b in "${BINS[@]}"; do
    bin=BIN_$b s=$RUN/$v-$b.sqlite u=$RUN/$v-$b-up.sqlite
    [[ -f $s ]] || continue
    step "$v-$b-resync" "$NU" "$ubytes" update-pages \
      "$(rmstore "$u") && cp $s $u && { [[ ! -f $s-wal ]] || cp $s-wal $u-wal; }" \
      "${!bin} import $RUN/$v-update.yml --store $u --progress never > /dev/null"
  done
  keys=$(key_of "$v")
  for b in "${BINS[@]}"; do
    s=$RUN/$v-$b.sqlite u=$RUN/$v-$b-up.sqlite
    check "$v $b sync rows" "$(q "$s" 'SELECT count(*) FROM journal')" "$N"
    case $v in
      int)  typed="typeof(id) = 'integer'" ;;
      text) typed="typeof(id) = 'text' AND id GLOB 'J-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]'" ;;
      pair) typed="typeof(spot_id) = 'integer' AND typeof(seq) = 'integer'" ;;
    esac
    check "$v $b sync key values ($typed)" "$(q "$s" "SELECT count(*) FROM journal WHERE $typed")" "$N"
    check "$v $b resync rows" "$(q "$u" 'SELECT count(*) FROM journal')" "$NU"
    check "$v $b resync changed (period differs, joined on $keys)" \
      "$(q "$u" "ATTACH '$s' AS o; SELECT count(*) FROM journal j JOIN o.journal p USING($keys) WHERE j.period IS NOT p.period")" \
      "$((N / 10))"
  done
done

# 5. the table
{
  echo "# Key-shape variants, N = $N"
  echo
  echo "\`BENCH_REPS=$REPS${SWELL_BASE:+ SWELL_BASE=$SWELL_BASE} bash bench/variants.sh $N\`, $(date -u +%Y-%m-%dT%H:%MZ), median of $REPS rep(s), pages over HTTP"
  echo "from $SERVER on loopback, $(nproc) cores, load average at the end $(cut -d' ' -f1-3 /proc/loadavg)."
  for b in "${BINS[@]}"; do
    bin=BIN_$b
    echo "- $b: \`${!bin}\` ($(stat -c %y "${!bin}" | cut -c1-16), sha256 $(sha256sum "${!bin}" | cut -c1-12))"
  done
  if [[ -f $RUN/failed ]]; then echo "- **checks failed:**"; sed 's/^/  - /' "$RUN/failed"
  else echo "- all checks passed (rows after sync and re-sync, changed rows, key types)"; fi
  echo
  "$PY" - "$OUT" "${BINS[@]}" <<'EOF'
import json, sys
res = {}
for line in open(sys.argv[1], encoding="utf-8"):
    if line.strip():
        r = json.loads(line); res[r["name"]] = r
bins = sys.argv[2:]
keys = {"int": "[id] integer", "text": "[id] text", "pair": "[spot_id, seq]"}
def ratio(a, b, k):
    return f"{a[k] / b[k]:.2f}" if a and b and a.get(k) and b.get(k) else "n/a"
hdr = ["variant", "key", "binary", "step", "wall s", "min-max", "CPU s", "peak RSS MiB", "noise", "wall / int"]
if "base" in bins:
    hdr += ["wall / base", "CPU / base"]
print("| " + " | ".join(hdr) + " |\n|" + "---|" * len(hdr))
for v in keys:
    for st in ("sync", "resync"):
        for b in bins:
            r = res.get(f"{v}-{b}-{st}")
            if not r or not r.get("reps"):
                err = r.get("error") if r else "not run"
                print(f"| {v} | {keys[v]} | {b} | {st} | FAILED: {err} |" + " |" * (len(hdr) - 5))
                continue
            ok = lambda x: x if x and x.get("reps") else None
            cells = [v, keys[v], b, st, f"{r['wall_s_median']:.3f}",
                     f"{r['wall_s_min']:.3f}-{r['wall_s_max']:.3f}", f"{r['cpu_s_median']:.2f}",
                     f"{r['peak_rss_kb_median'] / 1024:.1f}", f"{r['noise_cores_median']:.2f}",
                     ratio(r, ok(res.get(f"int-{b}-{st}")), "wall_s_median")]
            if "base" in bins:
                base = ok(res.get(f"{v}-base-{st}"))
                cells += (["", ""] if b == "base" else
                          [ratio(r, base, "wall_s_median"), ratio(r, base, "cpu_s_median")])
            print("| " + " | ".join(cells) + " |")
EOF
  echo
  echo "wall / int: this row's median wall over the int variant's, same binary and step."
  [[ -n $SWELL_BASE ]] && echo "wall / base, CPU / base: swell's median over base's, same variant and step (below 1.0: swell is faster)."
  echo "noise: cores something else kept busy (measure.py); above 0.3 the row is suspect."
} > "$MD.tmp"
mv "$MD.tmp" "$MD"
cat "$MD"
echo "variants.sh: table in $MD, raw results in $OUT" >&2
exit $fail
