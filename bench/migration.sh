#!/usr/bin/env bash
# Issue 45: a lightweight migration of a ROWS-row store (a rename, a widened type, an added
# required attribute with a default) by Swell, against sqlite3 doing the same by hand (the
# documented way to change a column's type: a new table, INSERT … SELECT, DROP, RENAME).
# Runs alternate, RUNS times each, on fresh copies of one seeded store; prints each run.
# Usage: bench/migration.sh [ROWS] [RUNS]    (default 1000000 3)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
rows="${1:-1000000}"
runs="${2:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here" && swift build -c release --product swell-migration-bench > /dev/null)
bench="$here/.build/release/swell-migration-bench"
"$bench" create "$work/seed.sqlite"
sqlite3 "$work/seed.sqlite" <<SQL
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO Item (id, title, count, price) SELECT i, 'item number ' || i, i % 1000, i * 0.25 FROM n;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
echo "seeded: $rows rows, $(du -m "$work/seed.sqlite" | cut -f1) MB"
for run in $(seq "$runs"); do
    cp "$work/seed.sqlite" "$work/swell.sqlite"
    "$bench" migrate "$work/swell.sqlite"
    cp "$work/seed.sqlite" "$work/hand.sqlite"
    /usr/bin/time -f "sqlite3 by hand: %e s wall, %U+%S s CPU, %M KiB peak RSS" sqlite3 "$work/hand.sqlite" <<'SQL'
BEGIN IMMEDIATE;
CREATE TABLE "Item_new" ("id" INTEGER PRIMARY KEY, "name" TEXT, "count" REAL, "price" REAL, "stock" INTEGER, "_pk" INTEGER);
INSERT INTO "Item_new" ("id", "name", "count", "price", "stock", "_pk") SELECT "id", "title", CAST("count" AS REAL), "price", 5, "_pk" FROM "Item" ORDER BY "id";
DROP TABLE "Item";
ALTER TABLE "Item_new" RENAME TO "Item";
CREATE UNIQUE INDEX "swell_Item_pk" ON "Item" ("_pk") WHERE "_pk" IS NOT NULL;
COMMIT;
SQL
done
