#!/usr/bin/env bash
# Checks rules of the code's layout that the compiler does not (README, "Layout"):
#   1. every dependency a target lists in Package.swift is imported by one of its files
#      (macro and executable dependencies excepted: a macro is used through
#      #externalMacro, an executable is run by the tests);
#   2. no source file uses Synchronization.Mutex: on Linux ThreadSanitizer cannot see its
#      futex, so the code uses SwellLocks' LockedValue (a POSIX mutex) everywhere.
# Prints each breach with its file and exits 1 when there is one. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import glob, re, sys

manifest = open("Package.swift").read()
problems = []
kinds = {name: kind for kind, name in re.findall(r'\.(macro|executableTarget)\(\s*name:\s*"([^"]+)"', manifest)}
for kind, name, body in re.findall(r'\.(target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)"(.*?)\n        \)', manifest, re.S):
    listed = re.search(r'dependencies:\s*\[(.*?)\]', body, re.S)
    if not listed:
        continue
    text = listed.group(1)
    products = re.findall(r'\.product\(name:\s*"([^"]+)"', text)
    plain = re.findall(r'(?<!name: )"([A-Za-z0-9_]+)"', re.sub(r'\.product\([^)]*\)', '', text))
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
