#!/usr/bin/env bash
# Installs swell, its completions (bash, zsh, fish) and its man page under PREFIX.
#
#   bash scripts/install.sh [PREFIX]          from a clone: builds the release tarball first
#   sudo ./install.sh [PREFIX]                from an unpacked release tarball (no Swift needed)
#
# PREFIX defaults to /usr/local: PREFIX/bin/swell, PREFIX/share/man/man1/swell.1,
# PREFIX/share/bash-completion/completions/swell, PREFIX/share/zsh/site-functions/_swell,
# PREFIX/share/fish/vendor_completions.d/swell.fish. Running it again replaces them.
set -euo pipefail
prefix=${1:-/usr/local}
here=$(cd "$(dirname "$0")" && pwd)
if [[ -x $here/swell && -d $here/completions ]]; then
    root=$here                                   # an unpacked release tarball
else
    repo=$(cd "$here/.." && pwd)                 # a clone: build the tarball, then unpack it
    tarball=$(bash "$repo/scripts/build-release.sh" | tail -1)
    unpacked=$(mktemp -d)
    trap 'rm -rf "$unpacked"' EXIT
    tar -C "$unpacked" -xzf "$repo/$tarball"
    root=$(echo "$unpacked"/swell-*)
fi
install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
    "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d"
install -m 755 "$root/swell" "$prefix/bin/swell"
install -m 644 "$root/man/man1/swell.1" "$prefix/share/man/man1/swell.1"
install -m 644 "$root/completions/swell.bash" "$prefix/share/bash-completion/completions/swell"
install -m 644 "$root/completions/_swell" "$prefix/share/zsh/site-functions/_swell"
install -m 644 "$root/completions/swell.fish" "$prefix/share/fish/vendor_completions.d/swell.fish"
echo "installed swell $("$prefix/bin/swell" --version) in $prefix"
