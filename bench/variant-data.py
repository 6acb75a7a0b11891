#!/usr/bin/env python3
"""Key-shape variants of the benchmark kit's paged data (python3 stdlib only).

usage: variant-data.py VARIANT SRC DST

SRC is a directory written by ../shared/bench/gen.py (with manifest.json,
pages/ and update/pages/). DST gets the same pages, record for record and
byte for byte except for the key, in the same layout (pages/page-NNNN.json
and update/pages/page-NNNN.json, 10,000 records a page, the same "next"
links, the last one null), plus DST/variant.json written last (what was
made, from which data, by which version of this script). Only the pages
are written: no records.json / .ndjson / .csv.

VARIANT is one of:

  text  the record's "id" (an integer) is replaced, in place, by the text
        "J-" + the id zero-padded to 10 digits: 123456 -> "J-0000123456".
        A one-to-one mapping, and the text order is the integer order.
        The entity's key is that text attribute: key [id], id: string.

  pair  the record's "id" is replaced, in place, by "seq": the record's
        1-based number among the records of the same spot ("spot":{"id"})
        in id order over the base data. The key is the pair
        [spot_id, seq] (spot_id from spot.id); neither alone is unique.
        In update/, a base record (same id, same spot) keeps its base pair;
        the new records continue each spot's count in id order. So rows
        arrive in neither spot_id nor seq order (each page mixes all spots).

Every other field (its value, its position in the record) is kept, and the
record is written as gen.py writes it (compact JSON, ensure_ascii=False).
Deterministic: the same SRC gives byte-identical DST.
"""
import array
import hashlib
import json
import os
import sys

VARIANTS = ("text", "pair")


def pages(src):
    d = os.path.join(src, "pages")
    names = sorted(n for n in os.listdir(d) if n.startswith("page-") and n.endswith(".json"))
    if not names:
        sys.exit(f"variant-data.py: no pages in {d}")
    return [os.path.join(d, n) for n in names]


def replace_key(rec, old, new, value):
    """A copy of rec with field old replaced by new=value at the same position."""
    return {(new if k == old else k): (value if k == old else v) for k, v in rec.items()}


class Pair:
    """id -> (spot, seq), kept in arrays indexed by id (ids are < 4 N)."""

    def __init__(self, max_id):
        self.seq = array.array("I", bytes(4 * (max_id + 1)))
        self.spot = array.array("H", bytes(2 * (max_id + 1)))
        self.count = {}

    def base(self, rec):
        rid, spot = rec["id"], rec["spot"]["id"]
        n = self.count.get(spot, 0) + 1
        self.count[spot] = n
        self.seq[rid], self.spot[rid] = n, spot
        return n

    def update(self, rec, base_max_id):
        rid, spot = rec["id"], rec["spot"]["id"]
        if rid <= base_max_id and self.seq[rid]:
            if self.spot[rid] != spot:
                sys.exit(f"variant-data.py: id {rid} moved from spot {self.spot[rid]} to {spot} in update/")
            return self.seq[rid]
        if rid <= base_max_id:
            sys.exit(f"variant-data.py: update/ has id {rid}, not in the base data but below its max id")
        n = self.count.get(spot, 0) + 1
        self.count[spot] = n
        return n


def rewrite(src_pages, dst_dir, fix):
    os.makedirs(dst_dir, exist_ok=True)
    for name in os.listdir(dst_dir):  # stale pages of another N
        if name.startswith("page-") and name.endswith(".json"):
            os.remove(os.path.join(dst_dir, name))
    count = 0
    for path in src_pages:
        with open(path, encoding="utf-8") as f:
            page = json.load(f)
        if set(page) != {"data", "next"}:
            sys.exit(f"variant-data.py: {path}: unexpected page members {sorted(page)}")
        lines = [json.dumps(fix(r), ensure_ascii=False, separators=(",", ":")) for r in page["data"]]
        count += len(lines)
        # gen.py's page layout exactly: one record a line, "next" as it was.
        out = os.path.join(dst_dir, os.path.basename(path))
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            f.write('{"data":[\n' + ",\n".join(lines) + '\n],"next":'
                    + json.dumps(page["next"], ensure_ascii=False) + "}\n")
    return count


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main(argv):
    if len(argv) != 4 or argv[1] not in VARIANTS:
        sys.exit(__doc__.split("\n\n")[1])
    variant, src, dst = argv[1:]
    manifest = json.load(open(os.path.join(src, "manifest.json"), encoding="utf-8"))
    base_max, upd_max = manifest["base"]["max_id"], manifest["update"]["max_id"]
    os.makedirs(dst, exist_ok=True)
    stamp = os.path.join(dst, "variant.json")
    if os.path.exists(stamp):
        os.remove(stamp)

    if variant == "text":
        def fix(rec):
            return replace_key(rec, "id", "id", f"J-{rec['id']:010d}")
        fix_base = fix_upd = fix
    else:
        pair = Pair(upd_max)

        def fix_base(rec):
            return replace_key(rec, "id", "seq", pair.base(rec))

        def fix_upd(rec):
            return replace_key(rec, "id", "seq", pair.update(rec, base_max))

    n = rewrite(pages(src), os.path.join(dst, "pages"), fix_base)
    nu = rewrite(pages(os.path.join(src, "update")), os.path.join(dst, "update", "pages"), fix_upd)
    if n != manifest["base"]["records"] or nu != manifest["update"]["records"]:
        sys.exit(f"variant-data.py: wrote {n} + {nu} records, manifest says "
                 f"{manifest['base']['records']} + {manifest['update']['records']}")
    with open(stamp, "w", encoding="utf-8") as f:
        json.dump({"variant": variant, "n": manifest["n"], "records": n, "update_records": nu,
                   "source_manifest_sha256": sha256_file(os.path.join(src, "manifest.json")),
                   "script_sha256": sha256_file(os.path.abspath(__file__))}, f, indent=1)
        f.write("\n")
    print(f"variant-data.py: {variant}: {n} records, update {nu} -> {dst}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
