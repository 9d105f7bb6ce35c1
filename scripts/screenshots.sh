#!/usr/bin/env bash
# Screenshots of the HTML reports for docs/images (plan, sim step, sim goodput, bench collective,
# bench pairs), taken by the same headless Chromium run that checks their layout
# (tests/report/browser.sh). usage: scripts/screenshots.sh [BUILD_DIR] (default build/dev)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/dev}
tests/report/browser.sh "$B/src/gpufleet" "$(pwd)" --screenshots docs/images
