#!/usr/bin/env python3
"""Deterministic nested data for Swell's nested-record benchmark (issue 10).

    nested-data.py N OUTDIR [--per-page 1000] [--seed 10]

Writes N GitHub-issue-like records as JSON pages OUTDIR/pages/page-0001.json ...
laid out as ../shared/bench/gen.py writes its pages ({"data":[ one compact
record per line ],"next":"page-0002.json"}, the last page "next":null; 1000
records a page by default, as the figures in BENCHMARKS.md were measured), so
../shared/bench/serve.sh serves them alike, and a re-sync snapshot
OUTDIR/update/pages/ where every 10th issue changed its title and every 20th
lost or gained a label. Each issue has an `author` object (one of N/50 users),
0-5 `labels` of 40 (name, color) and a `reactions` object (the json type).
OUTDIR/manifest.json says N, the seed and the counts a correct sync gives.
Stdlib only; the same arguments give the same bytes.
"""
import json, os, random, sys

def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    n, out = int(args[0]), args[1]
    per_page = int(args[args.index("--per-page") + 1]) if "--per-page" in args else 1000
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 10
    users = max(1, n // 50)
    labels = [("label-%02d" % i, "%06x" % (0x101010 * i % 0xffffff)) for i in range(40)]

    def issue(i, rng, update):
        k = rng.randrange(6)
        chosen = sorted(rng.sample(range(40), k))
        if update and i % 20 == 0:
            chosen = chosen[1:] if chosen else [i % 40]
        title = "Issue %d: something %s" % (i, "changed" if update and i % 10 == 0 else "broke")
        u = rng.randrange(users)
        return {
            "id": 1_000_000 + i, "number": i, "title": title, "state": "open" if i % 3 else "closed",
            "body": "Steps to reproduce %d" % i,
            "user": {"id": 10_000 + u, "login": "user%05d" % u},
            "labels": [{"name": labels[j][0], "color": labels[j][1]} for j in chosen],
            "reactions": {"total_count": i % 7, "+1": i % 5, "heart": i % 2},
        }

    links = 0
    for update in (False, True):
        rng = random.Random(seed)
        folder = os.path.join(out, "update", "pages") if update else os.path.join(out, "pages")
        os.makedirs(folder, exist_ok=True)
        pages = (n + per_page - 1) // per_page
        for p in range(pages):
            records = [issue(i, rng, update) for i in range(p * per_page + 1, min(n, (p + 1) * per_page) + 1)]
            if not update:
                links += sum(len(r["labels"]) for r in records)
            nxt = json.dumps("page-%04d.json" % (p + 2)) if p + 1 < pages else "null"
            lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records]
            with open(os.path.join(folder, "page-%04d.json" % (p + 1)), "w", encoding="utf-8", newline="\n") as f:
                f.write('{"data":[\n' + ",\n".join(lines) + '\n],"next":' + nxt + "}\n")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"n": n, "seed": seed, "per_page": per_page, "users": users, "labels": 40, "links": links}, f, indent=1)

if __name__ == "__main__":
    main()
