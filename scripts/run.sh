#!/usr/bin/env bash
# The README's first command: install dependencies, build, and plan the embedded reference
# cluster. Extra arguments go to `gpufleet plan` (e.g. scripts/run.sh --format json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh release
exec build/release/src/gpufleet plan "$@"
