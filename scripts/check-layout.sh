#!/usr/bin/env bash
# Checks rules of the code's layout that the compiler does not (README, "Layout"):
#   1. every dependency a target lists in Package.swift is imported by one of its files
#      (macro and executable dependencies excepted: a macro is used through
#      #externalMacro, an executable is run by the tests), and every module of this package
#      or of a listed package product that one of its files imports is listed (SwiftPM lets a
#      target import what it reaches only through another: the manifest would then hide it);
#   2. SwellContexts imports no store module (README "Store types": a coordinator is given
#      its store types, so an app links the stores it names);
#   3. no source file uses Synchronization.Mutex: on Linux ThreadSanitizer cannot see its
#      futex, so the code uses SwellLocks' LockedValue (a POSIX mutex) everywhere.
# Prints each breach with its file and exits 1 when there is one. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import glob, re, sys

manifest = open("Package.swift").read()
problems = []
modules = set(re.findall(r'\.(?:target|executableTarget|testTarget|macro|systemLibrary)\(\s*name:\s*"([^"]+)"', manifest))
modules |= set(re.findall(r'\.product\(name:\s*"([^"]+)"', manifest))
kinds = {name: kind for kind, name in re.findall(r'\.(macro|executableTarget)\(\s*name:\s*"([^"]+)"', manifest)}
for kind, name, body in re.findall(r'\.(target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)"(.*?)\n        \)', manifest, re.S):
    listed = re.search(r'dependencies:\s*\[', body)
    if not listed:
        continue
    depth, end = 1, listed.end()
    while depth:   # the list's own closing bracket (a condition's `traits: [...]` nests)
        depth += {"[": 1, "]": -1}.get(body[end], 0)
        end += 1
    text = body[listed.end():end - 1]
    products = re.findall(r'\.product\(name:\s*"([^"]+)"', text)
    targets = re.findall(r'\.target\(name:\s*"([^"]+)"', text)
    text = re.sub(r'\.(?:product|target)\((?:[^()]|\([^()]*\))*\)', '', text)
    plain = re.findall(r'"([A-Za-z0-9_]+)"', text) + targets
    path = re.search(r'path:\s*"([^"]+)"', body)
    folder = path.group(1) if path else ("Tests/" if kind == "testTarget" else "Sources/") + name
    imports = set()
    for file in glob.glob(folder + "/**/*.swift", recursive=True):
        for line in open(file, encoding="utf-8"):
            found = re.match(r'\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal)\s+)?import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?(\w+)', line)
            if found:
                imports.add(found.group(1))
    for dependency in plain + products:
        if dependency in kinds or dependency in imports:
            continue
        problems.append(f"Package.swift: {name} lists {dependency}, which none of its files under {folder} imports")
    for module in sorted(imports & modules - set(plain + products) - {name}):
        problems.append(f"Package.swift: {name} imports {module} (under {folder}) without listing it")

stores = {"SwellSQLite", "SwellInMemoryStore", "SwellPostgres", "CSQLite", "CLibPQ"}
for file in glob.glob("Sources/SwellContexts/**/*.swift", recursive=True):
    for number, line in enumerate(open(file, encoding="utf-8"), 1):
        found = re.match(r'\s*(?:@\w+\s+)*import\s+(\w+)', line)
        if found and found.group(1) in stores:
            problems.append(f"{file}:{number}: SwellContexts imports the store module {found.group(1)} (stores are given to it as StoreType values)")

for file in glob.glob("Sources/**/*.swift", recursive=True):
    for number, line in enumerate(open(file, encoding="utf-8"), 1):
        code = line.split("//", 1)[0]
        if re.search(r'\bMutex\s*[<(]', code):
            problems.append(f"{file}:{number}: Synchronization.Mutex (use SwellLocks' LockedValue: TSan sees it)")

for problem in problems:
    print("check-layout: " + problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "check-layout: ok"
