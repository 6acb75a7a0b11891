#!/usr/bin/env bash
# Builds a self-contained `swell` and packs it for servers and CI jobs without Swift:
#
#   bash scripts/build-release.sh            → dist/swell-<version>-linux-<arch>.tar.gz (+ .sha256)
#
# The Swift runtime and Foundation are linked statically (--static-swift-stdlib), so the
# binary needs only the system's shared libraries (libc, libstdc++, libsqlite3, libcurl,
# zlib, libdeflate, libpq and what they pull in: `ldd` lists them). The tarball holds the binary,
# README.md, LICENSE, install.sh, completions for bash, zsh and fish, the man page, and what
# README's "Install on a server" copies from it: pipelines/ (with the surf journal's fixture
# the bundled pipeline reads) and examples/systemd/.
# Environment: DIST (default dist), SWELL_STATIC_BUILD (the build folder, default .build-static).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/SwellPipeline/SwellVersion.swift)
[[ -n $version ]] || { echo "build-release: no version in Sources/SwellPipeline/SwellVersion.swift" >&2; exit 1; }
arch=$(uname -m)
name="swell-$version-linux-$arch"
dist=${DIST:-dist}
scratch=${SWELL_STATIC_BUILD:-.build-static}

swift build -c release --product swell --static-swift-stdlib --scratch-path "$scratch"
binary="$(swift build -c release --product swell --static-swift-stdlib --scratch-path "$scratch" --show-bin-path)/swell"
# The man page, from the command's own help (swift-argument-parser's plugin; it builds the
# debug tool, which the test build has already built).
swift package --disable-sandbox generate-manual --configuration debug --date "$(date -u +%Y-%m-%d)" >/dev/null
manual=.build/plugins/GenerateManual/outputs/swell/swell.1
[[ -f $manual ]] || { echo "build-release: the man page was not generated ($manual)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/completions" "$root/man/man1"
cp "$binary" "$root/swell"
strip --strip-debug "$root/swell"
cp README.md LICENSE "$root/"
cp scripts/install.sh "$root/install.sh"
"$root/swell" --generate-completion-script bash > "$root/completions/swell.bash"
"$root/swell" --generate-completion-script zsh > "$root/completions/_swell"
"$root/swell" --generate-completion-script fish > "$root/completions/swell.fish"
# The generator leaves a subcommand's blank discussion lines as empty input lines, which
# man warns about ("Empty input line"): each becomes the paragraph break it stands for.
sed 's/^$/.Pp/' "$manual" > "$root/man/man1/swell.1"
mkdir -p "$root/examples" "$root/fixtures"
cp -r pipelines "$root/pipelines"
cp -r examples/systemd "$root/examples/systemd"
cp -r fixtures/surf-journal "$root/fixtures/surf-journal"

mkdir -p "$dist"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - "$name" | gzip -n -9 > "$dist/$name.tar.gz"
(cd "$dist" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$dist/$name.tar.gz"
