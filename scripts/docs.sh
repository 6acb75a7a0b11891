#!/usr/bin/env bash
# Builds the documentation and fails on any DocC warning (an unresolved link, an ambiguous
# symbol): SwellStore's catalog — the guides and the store guarantees — over the symbols of
# everything `import SwellStore` brings (SwellContexts and SwellStoreCore are re-exported, and
# their symbols are extracted with SwellStore's so that ``ManagedObjectContext`` resolves from
# its articles), and SwellPipeline's (the pipeline file and command-line references).
# Output: .build/docs/SwellStore.doccarchive, .build/docs/SwellPipeline.doccarchive.
# Usage: scripts/docs.sh (after `swift build --build-tests`, which builds the modules).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/docs
graphs="$out/symbol-graphs/SwellStore"
rm -rf "$out"
mkdir -p "$graphs"
swift build --target SwellStore > /dev/null
modules="$(swift build --show-bin-path)/Modules"
includes=()
for library in Sources/C*/; do includes+=(-I "$library"); done
for flag in $(pkg-config --cflags-only-I libpq libcurl sqlite3 zlib libdeflate libcrypto); do includes+=(-Xcc "$flag"); done
swift-symbolgraph-extract -module-name SwellStore -target "$(uname -m)-unknown-linux-gnu" -I "$modules" "${includes[@]}" \
    -minimum-access-level public -experimental-allowed-reexported-modules=SwellContexts,SwellStoreCore,SwellSQLite,SwellInMemoryStore,SwellPostgres \
    -output-dir "$graphs"
convert() {   # catalog, name, symbol graphs
    local log
    log=$(docc convert "$1" --additional-symbol-graph-dir "$3" --fallback-display-name "$2" \
        --fallback-bundle-identifier "$2" --output-path "$out/$2.doccarchive" 2>&1) || { echo "$log" >&2; return 1; }
    if grep -q "warning:" <<< "$log"; then
        grep -A3 "warning:" <<< "$log" >&2
        echo "docs: DocC warnings in $2's documentation" >&2
        return 1
    fi
}
convert Sources/SwellStore/SwellStore.docc SwellStore "$graphs"
# SwellPipeline's catalog over its own symbols, as the DocC plugin makes them.
swift package --allow-writing-to-directory "$out" generate-documentation --target SwellPipeline \
    --output-path "$out/SwellPipeline.doccarchive" > "$out/SwellPipeline.log" 2>&1 || { cat "$out/SwellPipeline.log" >&2; exit 1; }
if grep -q "warning:" "$out/SwellPipeline.log"; then
    grep -A3 "warning:" "$out/SwellPipeline.log" >&2
    echo "docs: DocC warnings in SwellPipeline's documentation" >&2
    exit 1
fi
echo "docs: $out/SwellStore.doccarchive, $out/SwellPipeline.doccarchive"
