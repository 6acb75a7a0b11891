#!/usr/bin/env bash
# Checks that the pipeline writes through SwellStore's public API (README, "Layout": no side
# door). SwiftPM compiles every target of a package under one package name, so a `package`
# declaration of SwellStoreCore or SwellContexts is usable from SwellPipeline and `swell`
# without a word in their sources. This script has the compiler say whether one is used: in a
# copy of the working tree, SwellPipeline and `swell` become targets of a second package that
# depends on Swell by path — where a user's code stands — and are built there. A use of a
# `package` declaration is then an error ("inaccessible due to 'package' protection level")
# whose note says where the declaration is. The store modules (SwellStoreCore, SwellContexts,
# SwellSQLite, SwellPostgres) stay as they are: the pipeline uses their public API only. The
# pipeline's own lower modules (SwellHTTP, SwellJSON, …) are not the store's API: their
# `package` declarations are opened (made public) in the copy. Any error fails the check.
#
#   bash scripts/check-public-api.sh            # copy to a temporary folder, build, remove
#   KEEP=1 bash scripts/check-public-api.sh     # keep the copy (its path is printed)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d /tmp/swell-public-api.XXXXXX)
if [[ "${KEEP:-}" != 1 ]]; then trap 'rm -rf "$scratch"' EXIT; else echo "check-public-api: copy in $scratch"; fi
copy="$scratch/swell"     # the folder's name is the package's identity in the outside manifest
mkdir -p "$copy"
git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - | tar -xf - -C "$copy"

python3 - "$copy" <<'PY'
import glob, os, re, shutil, sys
copy = sys.argv[1]
outside = os.path.join(copy, "outside")
moved = {"SwellPipeline": "SwellPipelineOutside", "swell": "swellOutside"}
lower = ["SwellJSON", "SwellHTTP", "SwellCSV", "SwellInput", "SwellCalendar", "SwellLocks", "SwellLibcrypto"]
shown = ["SwellContexts", "SwellStoreCore", "SwellSQLite", "SwellPostgres"] + lower

# The lower modules' package declarations, opened.
declaration = re.compile(r'(^|[\s)])package(?=(\(set\))?\s+(var|let|func|static|struct|class|final|'
                         r'enum|indirect|protocol|init|mutating|typealias|weak|private|subscript|'
                         r'convenience|required|override|lazy|nonisolated|actor)\b)', re.M)
for module in lower:
    for file in glob.glob(f"{copy}/Sources/{module}/**/*.swift", recursive=True):
        text = open(file, encoding="utf-8").read()
        open(file, "w", encoding="utf-8").write(declaration.sub(lambda m: m.group(1) + "public", text))

# Swell's manifest offers the modules the pipeline imports as products.
manifest = open(f"{copy}/Package.swift").read()
products = "".join(f'        .library(name: "{name}", targets: ["{name}"]),\n' for name in shown)
manifest = manifest.replace("    products: [\n", "    products: [\n" + products, 1)
open(f"{copy}/Package.swift", "w").write(manifest)

# The pipeline and the tool, copied to the outside package under names of their own.
os.makedirs(f"{outside}/Sources")
for old, new in moved.items():
    shutil.copytree(f"{copy}/Sources/{old}", f"{outside}/Sources/{old}")
    for file in glob.glob(f"{outside}/Sources/{old}/**/*.swift", recursive=True):
        text = open(file, encoding="utf-8").read()
        text = re.sub(r'\bimport SwellPipeline\b', "import SwellPipelineOutside", text)
        text = re.sub(r'\bSwellPipeline\.', "SwellPipelineOutside.", text)
        open(file, "w", encoding="utf-8").write(text)
dependency = lambda names: ", ".join(f'.product(name: "{n}", package: "swell")' for n in names)
open(f"{outside}/Package.swift", "w").write(f'''// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "SwellOutside",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    ],
    targets: [
        .target(
            name: "SwellPipelineOutside",
            dependencies: [{dependency(shown)},
                .product(name: "Yams", package: "Yams"), .product(name: "Logging", package: "swift-log")],
            path: "Sources/SwellPipeline"
        ),
        .executableTarget(
            name: "swellOutside",
            dependencies: ["SwellPipelineOutside", {dependency(["SwellContexts", "SwellHTTP"])},
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")],
            path: "Sources/swell"
        ),
    ]
)
''')
PY
[[ -f Package.resolved ]] && cp Package.resolved "$copy/outside/"

cd "$copy/outside"
log="$scratch/build.log"
if swift build --product swellOutside >"$log" 2>&1; then
    echo "check-public-api: ok (SwellPipeline and swell use no package declaration of SwellStoreCore or SwellContexts)"
    exit 0
fi
python3 - "$log" "$copy" <<'PY'
import re, sys
log, copy = sys.argv[1], sys.argv[2]
lines = open(log, encoding="utf-8", errors="replace").read().splitlines()
core, other = [], []
for i, line in enumerate(lines):
    found = re.match(r"(\S+?):(\d+):\d+: error: (.*)", line)
    if not found:
        continue
    where = found.group(1).replace(copy + "/outside/", "").replace(copy + "/", "")
    message = found.group(3)
    note = next((l for l in lines[i + 1:i + 40] if "note:" in l and "declared here" in l), "")
    declared = re.match(r"(\S+?):\d+:\d+: note", note)
    place = declared.group(1).replace(copy + "/", "") if declared else ""
    entry = f"{where}:{found.group(2)}: {message}" + (f" (declared in {place})" if place else "")
    (core if re.search(r"Sources/Swell(StoreCore|Contexts)/", place) else other).append(entry)
for entry in sorted(set(core)):
    print("check-public-api: " + entry, file=sys.stderr)
for entry in sorted(set(other)):
    print("check-public-api: (not the core's) " + entry, file=sys.stderr)
print(f"check-public-api: {len(set(core))} uses of the core's package declarations, {len(set(other))} other errors", file=sys.stderr)
PY
exit 1
