#!/usr/bin/env bash
# Tests the release tarball (scripts/build-release.sh) as a server would get it: with no
# Swift toolchain. Each check runs inside a private mount namespace where a tmpfs hides
# the toolchain's folder, with LD_LIBRARY_PATH empty and PATH without it:
#   - the tarball matches its .sha256 and holds binary, README, LICENSE, install.sh,
#     completions, the man page (which groff reads without a warning), pipelines/ and
#     examples/systemd/;
#   - the binary needs no Swift library (ldd) and prints its version;
#   - it runs the bundled pipeline (pipelines/surf-journal.yml on fixtures/surf-journal/);
#   - install.sh from the unpacked tarball installs binary, completions and man page
#     under a prefix, and the installed binary runs the pipeline with the flags the
#     systemd unit and the cron line of examples/systemd use (--wait, --report);
#   - from the clone, scripts/install.sh builds the release and installs it;
#   - the unit files of examples/systemd pass systemd-analyze verify against it.
# Where the machine refuses mount namespaces, it says so and skips (exit 0).
#
#   bash scripts/test-release.sh dist/swell-<version>-linux-<arch>.tar.gz
set -uo pipefail
cd "$(dirname "$0")/.."
tarball=${1:?usage: test-release.sh TARBALL}
repo=$(pwd)
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
passed=0
failed=0
check() {  # NAME COMMAND...
    local name=$1; shift
    if output=$("$@" 2>&1); then
        passed=$((passed + 1)); echo "ok - $name"
    else
        failed=$((failed + 1)); echo "not ok - $name"; echo "$output" | sed 's/^/    /' | tail -20
    fi
}
if ! unshare --mount --propagation private true 2>/dev/null; then
    echo "test-release: skipped: this machine refuses mount namespaces (unshare --mount), so the toolchain cannot be hidden"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Runs a command with the toolchain out of reach.
hidden() {
    unshare --mount --propagation private env -i HOME="$work" PATH=/usr/sbin:/usr/bin:/sbin:/bin LD_LIBRARY_PATH= \
        TOOLCHAIN="$toolchain" bash -c 'mount -t tmpfs tmpfs "$TOOLCHAIN" && ! command -v swift >/dev/null && cd "$0" && eval "$1"' "$work" "$1"
}

check "the tarball matches its sha256" bash -c "cd '$(dirname "$tarball")' && sha256sum -c '$(basename "$tarball").sha256'"
tar -C "$work" -xzf "$tarball"
root=$(echo "$work"/swell-*)
check "the tarball holds binary, README, LICENSE, install.sh, completions and man page" \
    test -x "$root/swell" -a -f "$root/README.md" -a -f "$root/LICENSE" -a -x "$root/install.sh" -a -s "$root/completions/swell.bash" \
    -a -s "$root/completions/_swell" -a -s "$root/completions/swell.fish" -a -s "$root/man/man1/swell.1"
check "the tarball holds what Install on a server copies: pipelines/ and examples/systemd/" \
    test -s "$root/pipelines/surf-journal.yml" -a -s "$root/examples/systemd/swell-sync.service" -a -s "$root/examples/systemd/swell-sync.timer" \
    -a -s "$root/examples/systemd/crontab" -a -d "$root/fixtures/surf-journal"
check "the man page reads without warnings" bash -c "[ -z \"\$(groff -man -ww -z '$root/man/man1/swell.1' 2>&1)\" ]"
check "the binary needs no Swift library" bash -c "! ldd '$root/swell' | grep -Ei 'swift|$toolchain|not found'"
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/SwellPipeline/SwellVersion.swift)
check "with the toolchain hidden, it prints its version" hidden "[ \"\$('$root/swell' --version)\" = '$version' ]"
# The bundled pipeline as the tarball has it.
mkdir -p "$work/job/fixtures"
cp -r "$root/pipelines" "$work/job/"
cp -r "$root/fixtures/surf-journal" "$work/job/fixtures/"
check "with the toolchain hidden, it runs the bundled pipeline" hidden "cd job && '$root/swell' run pipelines/surf-journal.yml --report out/report.json --progress never \
    && [ \"\$(gzip -dc out/surf-journal.csv.gz | wc -l)\" = 21 ] && grep -q '\"status\" : \"succeeded\"' out/report.json \
    && grep -q '\"swell_version\" : \"$version\"' out/report.json"
prefix="$work/prefix"
check "with the toolchain hidden, install.sh installs binary, completions and man page" hidden "'$root/install.sh' '$prefix' \
    && [ -x '$prefix/bin/swell' ] && [ -s '$prefix/share/man/man1/swell.1' ] && [ -s '$prefix/share/bash-completion/completions/swell' ] \
    && [ -s '$prefix/share/zsh/site-functions/_swell' ] && [ -s '$prefix/share/fish/vendor_completions.d/swell.fish' ]"
check "the installed man page reads" bash -c "MANWIDTH=80 man -l '$prefix/share/man/man1/swell.1' 2>/dev/null | grep -q 'Sync remote JSON'"
check "the installed bash completion loads and completes subcommands" bash -c "source '$prefix/share/bash-completion/completions/swell' \
    && COMP_WORDS=(swell ru) COMP_CWORD=1 COMP_LINE='swell ru' COMP_POINT=8 && _swell && printf '%s\n' \"\${COMPREPLY[@]}\" | grep -qx run"
check "with the toolchain hidden, the installed binary runs as the systemd unit and cron line do" hidden "cd job && rm -rf out .swell \
    && '$prefix/bin/swell' run pipelines/surf-journal.yml --wait --report out/surf-journal.report.json 2>&1 | cat \
    && [ \"\${PIPESTATUS[0]}\" = 0 ] && [ -s out/surf-journal.csv.gz ]"
check "from a clone, scripts/install.sh builds the release and installs it" bash -c "bash scripts/install.sh '$work/from-clone' >/dev/null \
    && [ \"\$('$work/from-clone/bin/swell' --version)\" = '$version' ] && [ -s '$work/from-clone/share/man/man1/swell.1' ] \
    && ! ldd '$work/from-clone/bin/swell' | grep -qi swift"
if command -v systemd-analyze >/dev/null; then
    mkdir -p "$work/units"
    sed "s#/usr/local/bin/swell#$prefix/bin/swell#; s#^EnvironmentFile=.*#EnvironmentFile=-/dev/null#" examples/systemd/swell-sync.service > "$work/units/swell-sync.service"
    cp examples/systemd/swell-sync.timer "$work/units/"
    check "the systemd unit and timer verify against the installed binary" bash -c "cd '$work/units' && SYSTEMD_LOG_LEVEL=err systemd-analyze verify --man=no swell-sync.service swell-sync.timer"
fi
echo "release: $passed passed, $failed failed"
[ "$failed" = 0 ]
