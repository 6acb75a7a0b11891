#!/usr/bin/env bash
# Sets up what is missing, then builds and runs the whole test suite.
# This is the command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Layout rules the compiler does not check (manifest dependencies, no Synchronization.Mutex).
bash scripts/check-layout.sh
# No side door: SwellPipeline and swell use no package declaration of the store's core
# (built in a copy as a second package, where a user's code stands).
bash scripts/check-public-api.sh
swift build --build-tests
swift test
# The release tarball (self-contained binary, completions, man page, install.sh), tested with
# the Swift toolchain hidden, as a server without Swift would run it.
tarball=$(bash scripts/build-release.sh | tail -1)
bash scripts/test-release.sh "$tarball"
# The documentation, failing on any DocC warning: SwellStore's catalog (the guides and the
# store guarantees, over every symbol `import SwellStore` brings) and SwellPipeline's (the
# pipeline file and command line references).
bash scripts/docs.sh
