#!/usr/bin/env bash
# Sync and re-sync of N orders, each with 0-5 lines in a to-many kept by its
# inverse to-one (Line.order), from one NDJSON file: the nested shape whose
# children point at their record. Prints /usr/bin/time's wall, CPU and peak RSS
# for each binary given, and checks that every binary leaves the same rows.
#
#   bash bench/order-lines.sh N [SWELL...]   e.g.  bash bench/order-lines.sh 200000 /tmp/swell-main .build/release/swell
#
# Environment: BENCH_WORK (/tmp/swell-bench).
set -euo pipefail
export LC_ALL=C.UTF-8
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ $# -ge 1 && $1 =~ ^[1-9][0-9]*$ ]] || { sed -n '2,9p' "$0" >&2; exit 2; }
N=$1; shift
BINARIES=("$@"); [[ ${#BINARIES[@]} -gt 0 ]] || BINARIES=(.build/release/swell)
WORK=${BENCH_WORK:-/tmp/swell-bench}/order-lines-$N
mkdir -p "$WORK"
if [[ ! -f $WORK/orders.ndjson ]]; then
  python3 - "$N" "$WORK/orders.ndjson" <<'PY'
import json, random, sys
random.seed(7); n = int(sys.argv[1]); sku = 0
with open(sys.argv[2], "w") as f:
    for i in range(1, n + 1):
        lines = []
        for _ in range(random.randint(0, 5)):
            sku += 1
            lines.append({"sku": "S%07d" % sku, "qty": random.randint(1, 9)})
        f.write(json.dumps({"id": i, "note": "order %d" % i, "lines": lines}) + "\n")
PY
fi
cat > "$WORK/ol.yml" <<YML
version: 2
name: ol
entities:
  Order:
    key: [id]
    attributes: { id: integer, note: string? }
    relationships: { lines: { to: Line, many: true, inverse: order } }
  Line:
    key: [sku]
    attributes: { sku: string, qty: integer? }
    relationships: { order: { to: Order, inverse: lines } }
sources:
  - name: orders
    entity: Order
    url: $WORK/orders.ndjson
    format: ndjson
    fields:
      lines: { path: lines, fields: { sku: sku, qty: qty } }
YML
digest=""
for binary in "${BINARIES[@]}"; do
  store=$WORK/store-$(basename "$binary").sqlite
  rm -f "$store"*
  for step in sync resync; do
    /usr/bin/time -f "$binary $step: %e s wall, %U + %S s CPU, %M KB peak RSS" \
      "$binary" import "$WORK/ol.yml" --store "$store" --progress never > /dev/null 2> "$WORK/time.txt" || { cat "$WORK/time.txt" >&2; exit 1; }
    tail -1 "$WORK/time.txt"
  done
  rows=$(sqlite3 "$store" 'SELECT l.sku, l.qty, o.id FROM Line l LEFT JOIN "Order" o ON l."order" = o._pk ORDER BY l.sku' | md5sum)
  [[ -z $digest || $digest == "$rows" ]] || { echo "CHECK FAILED: $binary left other rows" >&2; exit 1; }
  digest=$rows
done
echo "rows identical across binaries: $digest"
