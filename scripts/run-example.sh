#!/usr/bin/env bash
# Sets up what is missing, then runs the main job on the bundled example:
# `swell run pipelines/surf-journal.yml`, which syncs the pages under
# fixtures/surf-journal/ into .swell/surf-journal.sqlite and writes
# out/surf-journal.csv.gz (and out/surf-journal-good-days.csv).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --product swell
.build/debug/swell run pipelines/surf-journal.yml --report out/surf-journal.report.json
