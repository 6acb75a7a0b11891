#!/usr/bin/env bash
# Syncs over a loopback API that answers every request after a set latency
# (Tests/servers/latency_server.py: threaded, TCP_NODELAY, one write per answer)
# and prints a markdown table of /usr/bin/time's wall, CPU and peak RSS per run,
# with the floor requests × latency ÷ concurrency, for issue 43's bars:
#   a. for_each of 8 items × 10 pages @ 100 ms, concurrency 8 (Link-header
#      paging, GitHub-style, and page-number paging)
#   b. an offset source of 80 pages @ 100 ms, concurrency 8
#   c. an offset source of 1,000 pages × 1,000 records @ 50 ms, concurrency 16,
#      and the same 1M records over loopback with no latency
#   d. a source with rate_limit 20/s over 200 pages, no latency: from the
#      server's /_stats, the most requests in any 1-s window and their span
# Each pipeline runs as written (the concurrent column) and with
# `concurrency: 1` (the "now" column), each into a fresh store. For c the server
# makes its pages before the runs (--cache-pages, /_warm), so that the time is
# Swell's and not the Python server's.
#
#   bash bench/latency.sh                        # version-4 files
#   SWELL_BENCH_VERSION=3 bash bench/latency.sh  # the same files as version 3, without
#                                                # the version-4 keys: one request at a time
#
# Environment: SWELL (a swell binary; default: build .build/release/swell),
# BENCH_WORK (/tmp/swell-bench), SWELL_BENCH_CASES (default "a b c d": which to run).
# Needs python3, curl and /usr/bin/time. Not part of CI.
set -euo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VERSION=${SWELL_BENCH_VERSION:-4}
[[ $VERSION == 3 || $VERSION == 4 ]] || { echo "latency: SWELL_BENCH_VERSION is 3 or 4, not $VERSION" >&2; exit 2; }
CASES=${SWELL_BENCH_CASES:-a b c d}
if [[ -z ${SWELL:-} ]]; then
  swift build -c release --product swell >&2
  SWELL=$PWD/.build/release/swell
fi
WORK=${BENCH_WORK:-/tmp/swell-bench}/latency
rm -rf "$WORK" && mkdir -p "$WORK"
SERVERS=()
trap 'for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

# start_server ARGS...: starts latency_server.py; sets BASE.
start_server() {
  local out=$WORK/server-${#SERVERS[@]}-$RANDOM.out
  SWELL_TEST_PID=$$ /usr/bin/python3 Tests/servers/latency_server.py "$@" > "$out" 2> "$out.err" &
  for _ in $(seq 200); do grep -q '^PORT' "$out" 2>/dev/null && break; sleep 0.05; done
  read -r _ port _ pid < "$out" || { echo "latency: latency_server.py did not start" >&2; cat "$out.err" >&2; exit 1; }
  SERVERS+=("$pid")
  BASE=http://127.0.0.1:$port
}

# warm LIMIT: the server (started with --cache-pages) makes its pages of LIMIT records now.
warm() {
  curl -sf -X POST "$BASE/_warm?limit=$1" > /dev/null || { echo "latency: the server at $BASE did not warm up" >&2; exit 1; }
}

stop_server() {
  kill "${SERVERS[-1]}" 2>/dev/null || true
  unset 'SERVERS[-1]'
}

# pipeline FILE CONCURRENCY SOURCE-YAML: a pipeline file; in version 3 the lines marked
# "# v4" are left out, and so is the top-level concurrency.
pipeline() {
  local file=$1 concurrency=$2 source=$3
  {
    echo "version: $VERSION"
    echo "name: latency"
    [[ $VERSION == 4 ]] && echo "concurrency: $concurrency"
    cat <<'YML'
entities:
  Record:
    key: [id]
    attributes: { id: integer, item: string?, page: integer, name: string, value: double, active: boolean, updated_at: date, tags: json? }
sources:
YML
    if [[ $VERSION == 4 ]]; then echo "$source"; else echo "$source" | grep -v '# v4'; fi
  } > "$file"
}

# timed_run FILE EXPECTED-RECORDS: runs `swell import` into a fresh store; sets CELL
# ("wall s / CPU s / RSS MiB", or why it failed) and WALL.
timed_run() {
  local file=$1 expected=$2 store=$WORK/store.sqlite status=0
  rm -f "$store"* "$WORK/report.json"
  curl -sf -X POST "$BASE/_reset" > /dev/null || { echo "latency: the server at $BASE does not answer" >&2; exit 1; }
  /usr/bin/time -o "$WORK/time.txt" -f "%e %U %S %M" \
    "$SWELL" import "$file" --store "$store" --report "$WORK/report.json" --progress never \
    > "$WORK/run.out" 2> "$WORK/run.err" || status=$?
  read -r WALL user sys rss < <(tail -1 "$WORK/time.txt")
  if [[ $status -ne 0 ]]; then
    cp "$WORK/run.err" "${file%.yml}.err"
    CELL="failed (exit $status: $(grep -v -e ' notice ' -e '^\s*$' "$WORK/run.err" | tail -1 | cut -c1-100); ${file%.yml}.err)"
    return
  fi
  local records
  records=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(s.get("records", 0) for s in r["sources"]))' "$WORK/report.json")
  CELL=$(python3 -c 'import sys; w,u,s,m=map(float,sys.argv[1:5]); print(f"{w:.2f} s / {u+s:.2f} s / {m/1024:.0f} MiB")' "$WALL" "$user" "$sys" "$rss")
  [[ $records == "$expected" ]] || CELL="$CELL (records $records, not $expected)"
  CELL="$CELL, $(server_requests) req"
}

# server_requests: how many requests the server saw since the last reset.
server_requests() {
  curl -sf "$BASE/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])'
}

# window_stats: the most requests that arrived in any 1-s window, and the span from the
# first arrival to the last answer.
window_stats() {
  curl -sf "$BASE/_stats" | python3 -c '
import json, sys
requests = json.load(sys.stdin)["requests"]
times = sorted(r["t"] for r in requests)
best = first = 0
for last in range(len(times)):
    while times[last] - times[first] >= 1.0:
        first += 1
    best = max(best, last - first + 1)
span = max(r["t_end"] or 0 for r in requests) - times[0] if times else 0
print(f"{best} in the busiest 1-s window, {len(times)} requests in {span:.2f} s")'
}

floor() {  # floor REQUESTS LATENCY CONCURRENCY
  python3 -c 'import sys; r,l,c=map(float,sys.argv[1:4]); print(f"{r*l/c:.2f} s")' "$@"
}

ROWS=()
RATE_ROWS=()
# row LABEL FILE-STEM SOURCE-YAML CONCURRENCY REQUESTS LATENCY RECORDS [FLOORS]: both
# columns of one case; FLOORS replaces the computed floors.
row() {
  local label=$1 stem=$2 source=$3 concurrency=$4 requests=$5 latency=$6 records=$7 floors=${8:-} concurrent sequential
  if [[ $VERSION == 4 ]]; then
    pipeline "$WORK/$stem.yml" "$concurrency" "$source"
    timed_run "$WORK/$stem.yml" "$records"; concurrent=$CELL
    [[ -n ${RATE:-} ]] && RATE_ROWS+=("| $label, concurrency $concurrency | $(window_stats) | $WALL s |")
  else
    concurrent="— (version 3: one request at a time)"
  fi
  pipeline "$WORK/$stem-1.yml" 1 "$source"
  timed_run "$WORK/$stem-1.yml" "$records"; sequential=$CELL
  [[ -n ${RATE:-} ]] && RATE_ROWS+=("| $label, concurrency 1 (v$VERSION) | $(window_stats) | $WALL s |")
  [[ -n $floors ]] || floors="$(floor "$requests" "$latency" "$concurrency") / $(floor "$requests" "$latency" 1)"
  ROWS+=("| $label | $requests | $floors | $concurrent | $sequential |")
  echo "latency: $label done" >&2
}

offset_source() {  # offset_source LIMIT EXTRA-LINES
  cat <<YML
  - name: records
    entity: Record
    url: $BASE/offset
    records: data
    paginate:
      offset: { param: offset, limit_param: limit, limit: $1, total: meta.total }
$2
YML
}

items="[item-1, item-2, item-3, item-4, item-5, item-6, item-7, item-8]"
for case in $CASES; do
  case $case in
  a)
    start_server --delay 0.1 --records-per-page 100 --pages 10 --items-count 8
    row "a. for_each 8 × 10 pages @ 100 ms, Link header" foreach-link "  - name: issues
    entity: Record
    url: $BASE/items/\${item}/link?per_page=100
    for_each: $items
    paginate: { link_header: true }" 8 80 0.1 8000
    # Page numbers: each item ends at its first empty page, an 11th request.
    row "a. for_each 8 × 10 pages @ 100 ms, page numbers" foreach-pages "  - name: issues
    entity: Record
    url: $BASE/items/\${item}/pages?per_page=100
    for_each: $items
    paginate: { param: page }" 8 88 0.1 8000
    stop_server ;;
  b)
    start_server --delay 0.1 --records-per-page 100 --pages 80
    row "b. offset 80 pages @ 100 ms" offset80 "$(offset_source 100 "")" 8 80 0.1 8000
    stop_server ;;
  c)
    # The pages are made before the runs: a page of 1,000 records costs the server ~3 ms of
    # Python, which would otherwise be most of the no-latency sync's time.
    start_server --delay 0.05 --records-per-page 1000 --pages 1000 --cache-pages
    warm 1000
    row "c. offset 1,000 pages × 1,000 records @ 50 ms" offset1m "$(offset_source 1000 "")" 16 1000 0.05 1000000
    stop_server
    start_server --delay 0 --records-per-page 1000 --pages 1000 --cache-pages
    warm 1000
    row "c. the same 1M records, no latency" offset1m-loopback "$(offset_source 1000 "")" 16 1000 0 1000000 "— (the CPU's)"
    stop_server ;;
  d)
    start_server --delay 0 --records-per-page 10 --pages 200
    RATE=1
    row "d. rate_limit 20/s, 200 pages, no latency" rate "$(offset_source 10 "    rate_limit: { requests: 20, per: 1s }   # v4")" 8 200 0 2000 \
      "$([[ $VERSION == 4 ]] && echo "10 s (200 ÷ 20/s)" || echo "— (no rate_limit in version 3)")"
    RATE=
    stop_server ;;
  *) echo "latency: no case $case (a, b, c, d)" >&2; exit 2 ;;
  esac
done

echo "## bench/latency.sh, version-$VERSION files, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
echo
echo "| case | requests | floor (concurrent / 1 in flight) | concurrent: wall / CPU / peak RSS, requests seen | concurrency 1 (now) |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${ROWS[@]}"
if [[ ${#RATE_ROWS[@]} -gt 0 ]]; then
  echo
  echo "Rate limit (d), bar: no 1-s window over 21, total ≤ 10.5 s (floor 200 ÷ 20/s = 10 s):"
  echo
  echo "| run | at the server | wall |"
  echo "| --- | --- | --- |"
  printf '%s\n' "${RATE_ROWS[@]}"
fi
