#!/usr/bin/env bash
# Sets up what is missing, then runs the main job on the bundled example:
# the SurfJournal flow on the pages under fixtures/surf-journal/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift run surf-journal
