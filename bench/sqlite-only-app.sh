#!/usr/bin/env bash
# Issue 44: what a SwellStore app that uses SQLite only builds and links. Cold-builds
# examples/sqlite-only-app (Swell with `traits: []`) and, for comparison, the same app with
# SwellStore's default traits, each from an empty .build; prints seconds, whether swift-syntax
# was compiled, and the shared libraries of the binary (`ldd`).
# Usage: bench/sqlite-only-app.sh [release|debug]   (default: debug, as `swift build` does)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
config="${1:-debug}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for variant in no-traits default-traits; do
    app="$work/$variant"
    cp -r "$here/examples/sqlite-only-app" "$app"
    # The copy depends on this checkout by absolute path.
    sed -i "s|path: \"../..\"|path: \"$here\"|" "$app/Package.swift"
    if [ "$variant" = default-traits ]; then sed -i 's|, traits: \[\])|)|' "$app/Package.swift"; fi
    (cd "$app" && swift package resolve > /dev/null 2>&1)
    start=$(date +%s.%N)
    (cd "$app" && swift build -c "$config" > "$work/$variant.log" 2>&1) || { cat "$work/$variant.log"; exit 1; }
    end=$(date +%s.%N)
    binary="$app/.build/$config/NotesApp"
    syntax=$(grep -c "Compiling SwiftSyntax\|Compiling SwiftCompilerPlugin\|Compiling SwellMacros" "$work/$variant.log" || true)
    printf '%s: %.0f s cold %s build; swift-syntax/macro compile steps: %s\n' "$variant" "$(echo "$end - $start" | bc)" "$config" "$syntax"
    echo "  ldd: $(ldd "$binary" | awk '{print $1}' | grep -E 'libpq|libsqlite3|libcurl|libssl|libcrypto' | tr '\n' ' ')"
    (cd "$app" && "$binary" "$work/$variant.sqlite" | tail -1)
done
